//! mocopi-dump's `--mapping FILE` (`bridge::parse_mapping`): any text as a
//! mapping file from HumanBodyBones names to mocopi joints, then the table
//! it gives put to work (`bridge::Retarget`, as the bridge does).
//!
//! Asserted: a table that is accepted is not empty, names each bone once,
//! by its HumanBodyBones name, in HumanBodyBones order, with joints of the
//! mocopi skeleton; written back as JSON, by joint id or by joint name, it
//! reads back the same. Retargeting a rest pose through it gives one unit
//! rotation per mapped bone.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mocap_core::bridge::{Retarget, default_parents, parse_mapping};
use mocap_core::smf::{BONE_COUNT, bone_name};
use mocap_core::vmc::bone_index;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(table) = parse_mapping(text) else {
        return;
    };
    assert!(!table.is_empty(), "an empty mapping was accepted");
    let order: Vec<usize> = table
        .iter()
        .map(|(bone, _)| bone_index(bone).unwrap_or_else(|| panic!("{bone:?} is not a HumanBodyBones name")))
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "bones out of order or twice: {table:?}");
    assert!(table.iter().all(|(_, j)| *j < BONE_COUNT), "{table:?}");
    let json = |joint: &dyn Fn(usize) -> String| {
        let fields: Vec<String> = table.iter().map(|(b, j)| format!("{b:?}: {}", joint(*j))).collect();
        format!("{{{}}}", fields.join(", "))
    };
    let by_id = json(&|j| j.to_string());
    assert_eq!(parse_mapping(&by_id).expect("its own table by id"), table, "{by_id}");
    let by_name = json(&|j| {
        let id = u16::try_from(j).expect("a joint id");
        format!("{:?}", bone_name(id).expect("a mocopi joint"))
    });
    assert_eq!(parse_mapping(&by_name).expect("its own table by name"), table, "{by_name}");
    let rotations = Retarget::new(&table, &default_parents()).rotations(&[[0.0, 0.0, 0.0, 1.0]; BONE_COUNT]);
    assert_eq!(rotations.len(), table.len());
    for (bone, q) in rotations {
        let n = q.iter().map(|v| v * v).sum::<f32>();
        assert!((n - 1.0).abs() < 1e-4, "{bone}: {q:?}");
    }
});

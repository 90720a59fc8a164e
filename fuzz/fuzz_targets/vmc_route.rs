//! What vmc-relay forwards to one destination: `vmc::Rules` (address and
//! bone filters, expression renames) and `vmc::Limiter` (per-stream rate),
//! on the messages of any OSC datagrams and any timing.
//!
//! Asserted for the rules: a message passes exactly when the filters say so
//! (checked here from their definitions), and what passes is the message
//! unchanged but for a renamed expression. For the limiter: two updates of
//! one stream never go closer than the interval; the newest value of every
//! stream always goes out in the end (nothing is lost to the limit); every
//! offered update is either sent or counted as superseded; after `due(now)`
//! nothing held is due before a later time. For `vmc::Lean` (the relay's
//! path for rules without a rate limit): it takes only datagrams that
//! decode, and sends the same datagrams as the rules applied to the decoded
//! messages, then written one by one or packed into bundles.
#![no_main]

use std::collections::HashMap;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mocap_core::osc::{self, Arg, Pattern};
use mocap_core::vmc::{self, Lean, Limiter, Rename, Rules};

const PATTERNS: [&str; 6] = [
    "/VMC/Ext/Bone/Pos",
    "/VMC/Ext/Blend/*",
    "/VMC/Ext/{Root,Bone}/Pos",
    "/VMC/Ext/?/*",
    "/VMC/Ext/[A-C]*",
    "/*",
];
const LIMITED: [&str; 10] = [
    "/VMC/Ext/Bone/Pos",
    "/VMC/Ext/Blend/Val",
    "/VMC/Ext/Root/Pos",
    "/VMC/Ext/Cam",
    "/VMC/Ext/Hmd/Pos",
    "/VMC/Ext/Con/Pos",
    "/VMC/Ext/Tra/Pos",
    "/VMC/Ext/Hmd/Pos/Local",
    "/VMC/Ext/Con/Pos/Local",
    "/VMC/Ext/Tra/Pos/Local",
];

fn first_string(m: &osc::Message) -> Option<&str> {
    match m.args.first() {
        Some(Arg::String(s)) => Some(s),
        _ => None,
    }
}

fn pick(bits: u8) -> Vec<Pattern> {
    PATTERNS
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .map(|(_, p)| Pattern::new(p).expect("a valid pattern"))
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let [o, d, f, rate, pat_len, rest @ ..] = data else {
        return;
    };
    let (pattern, rest) = rest.split_at(usize::from(*pat_len % 32).min(rest.len()));
    // A pattern from the command line may be anything: compiles or is refused.
    let extra = std::str::from_utf8(pattern).ok().and_then(|p| Pattern::new(p).ok());
    let mut only = pick(*o);
    only.extend(extra.filter(|_| f & 32 != 0));
    let rules = Rules {
        only,
        drop: pick(*d),
        bones: (f & 1 != 0).then(|| vec!["Hips".to_owned(), "Head".to_owned()]),
        drop_bones: if f & 2 != 0 { vec!["Head".to_owned()] } else { Vec::new() },
        rename: match f >> 2 & 3 {
            1 => Some(Rename::Vrm0ToVrm1),
            2 => Some(Rename::Vrm1ToVrm0),
            _ => None,
        },
        flatten: f & 64 != 0,
        ..Rules::default()
    };
    let mut lean = Lean::new(if f & 128 != 0 { 96 } else { vmc::MAX_BUNDLE });
    let interval = Duration::try_from_secs_f64(1.0 / f64::from(*rate).max(1e-3)).unwrap();
    let mut limiter = Limiter::new(f64::from(*rate));
    let mut now = Duration::ZERO;
    let mut offered = 0u64;
    let mut sent_count = 0u64;
    let mut last_sent: HashMap<String, Duration> = HashMap::new();
    let mut newest: HashMap<String, osc::Message> = HashMap::new();
    let mut final_sent: HashMap<String, osc::Message> = HashMap::new();
    let mut send = |now: Duration, m: osc::Message, last_sent: &mut HashMap<String, Duration>| {
        let key = format!("{}\0{}", m.address, first_string(&m).unwrap_or_default());
        if let Some(t) = last_sent.insert(key.clone(), now) {
            assert!(now - t >= interval, "{key:?} sent {:?} after the last, interval {interval:?}", now - t);
        }
        final_sent.insert(key, m);
    };
    for (i, datagram) in rest.split(|b| *b == 0xff).enumerate() {
        now += Duration::from_millis(u64::from(datagram.first().copied().unwrap_or(0) % 64));
        if let Some(flat) = osc::Flat::parse(datagram) {
            let Ok(packet) = osc::decode(datagram) else {
                panic!("the lean path took a datagram that does not decode");
            };
            let mut got = Vec::new();
            let done = lean.forward(&rules, &flat, |b| got.push(b.to_vec())).expect("renames carry no NUL");
            let all = packet.messages();
            let kept: Vec<osc::Message> = all.iter().filter_map(|m| rules.apply(m)).collect();
            let mut want = Vec::new();
            if rules.flatten || !packet_is_bundle(&packet) {
                want.extend(kept.iter().map(wire));
            } else {
                vmc::pack(&kept, if f & 128 != 0 { 96 } else { vmc::MAX_BUNDLE }, &mut want).expect("decoded messages can be written");
            }
            assert_eq!(got, want, "the lean path and the decoding path send different datagrams");
            assert_eq!(done.dropped, (all.len() - kept.len()) as u64);
        }
        let Ok(packet) = osc::decode(datagram) else {
            continue;
        };
        for m in packet.messages() {
            let addr = m.address.as_str();
            let name = first_string(m);
            let bone = addr == "/VMC/Ext/Bone/Pos";
            let keep = (rules.only.is_empty() || rules.only.iter().any(|p| p.matches(addr)))
                && !rules.drop.iter().any(|p| p.matches(addr))
                && !(bone && rules.bones.as_ref().is_some_and(|b| !name.is_some_and(|n| b.iter().any(|x| x == n))))
                && !(bone && name.is_some_and(|n| rules.drop_bones.iter().any(|x| x == n)));
            let out = rules.apply(m);
            assert_eq!(out.is_some(), keep, "{m:?}");
            let Some(out) = out else {
                continue;
            };
            assert_eq!(out.address, m.address);
            assert_eq!(out.args.len(), m.args.len());
            let renamed = rules.rename.is_some() && addr == "/VMC/Ext/Blend/Val";
            if !renamed {
                assert_eq!(wire(&out), wire(m));
            } else {
                // Only the name (the first argument, when it is one) changes.
                assert_eq!(format!("{:?}", out.args.get(1..)), format!("{:?}", m.args.get(1..)));
            }
            if LIMITED.contains(&addr) {
                offered += 1;
                let key = format!("{}\0{}", out.address, first_string(&out).unwrap_or_default());
                newest.insert(key, out.clone());
                limiter.handle_message(now, out);
                while let Some(m) = limiter.poll_due() {
                    sent_count += 1;
                    send(now, m, &mut last_sent);
                }
            } else {
                limiter.handle_message(now, out.clone());
                assert_eq!(limiter.poll_due().map(|m| wire(&m)), Some(wire(&out)), "an unlimited message was held");
            }
        }
        if i % 2 == 1 {
            limiter.handle_timeout(now);
            while let Some(m) = limiter.poll_due() {
                sent_count += 1;
                send(now, m, &mut last_sent);
            }
            assert!(limiter.poll_timeout().is_none_or(|t| t > now));
        }
    }
    // Flush: every held value goes when its slot comes.
    while let Some(t) = limiter.poll_timeout() {
        // A slot that came while no one called `due` is due at once.
        now = now.max(t);
        limiter.handle_timeout(now);
        while let Some(m) = limiter.poll_due() {
            sent_count += 1;
            send(now, m, &mut last_sent);
        }
    }
    assert_eq!(offered, sent_count + limiter.superseded(), "updates lost to the limit");
    for (key, m) in &newest {
        assert_eq!(final_sent.get(key).map(wire), Some(wire(m)), "the newest value of {key:?} never went out");
    }
});

fn packet_is_bundle(p: &osc::PacketRepr) -> bool {
    matches!(p, osc::PacketRepr::Bundle { .. })
}

/// A message as its bytes: `==` on messages is false for a NaN argument,
/// which passes the relay unchanged all the same.
fn wire(m: &osc::Message) -> Vec<u8> {
    osc::message(m).expect("a decoded message can be written")
}

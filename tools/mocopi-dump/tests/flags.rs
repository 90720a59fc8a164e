//! No flag value panics: every number-valued flag that `--help` lists,
//! given zero, negatives, NaN, infinities and values past any clock, either
//! runs or is refused with exit 2 naming the flag.

const BIN: &str = env!("CARGO_BIN_EXE_mocopi-dump");
const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures");

#[test]
fn no_flag_value_panics() {
    let read = format!("{CAPTURES}/mocopi/mocopi-frame-loss.pcapng");
    let base = [
        "-r",
        &read,
        "--topspeed",
        "--format",
        "json",
        "--smooth",
        "--vrchat",
        "127.0.0.1:9",
    ];
    mocap_testutil::sweep_number_flags(BIN, &[], &base, |f| f != "--vmt-base");
    // --vmt-base goes with --vmt.
    let base = ["-r", &read, "--topspeed", "--vmt", "127.0.0.1:9"];
    mocap_testutil::sweep_number_flags(BIN, &[], &base, |_| true);
}

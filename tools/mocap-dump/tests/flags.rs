//! No flag value panics: every number-valued flag that `--help` lists,
//! given zero, negatives, NaN, infinities and values past any clock, either
//! runs or is refused with exit 2 naming the flag.

const BIN: &str = env!("CARGO_BIN_EXE_mocap-dump");

#[test]
fn no_flag_value_panics() {
    let read = mocap_testutil::capture("openseeface/face-32fps.pcap");
    let read = read.display().to_string();
    let base = [
        "-r",
        &read,
        "--topspeed",
        "--vmc",
        "127.0.0.1:9",
        "--smooth",
        "--format",
        "json",
    ];
    mocap_testutil::sweep_number_flags(BIN, &[], &base, |_| true);
}

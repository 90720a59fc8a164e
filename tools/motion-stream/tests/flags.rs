//! No flag value panics: every number-valued flag that `--help` lists,
//! given zero, negatives, NaN, infinities and values past any clock, either
//! runs or is refused with exit 2 naming the flag.

const BIN: &str = env!("CARGO_BIN_EXE_motion-stream");

#[test]
fn no_flag_value_panics() {
    let base = [
        "-l",
        "127.0.0.1:0",
        "--vmc",
        "127.0.0.1:0",
        "--duration",
        "200ms",
    ];
    mocap_testutil::sweep_number_flags(BIN, &["serve"], &base, |f| f != "--duration");
}

//! No flag value panics: every number-valued flag that `--help` lists,
//! given zero, negatives, NaN, infinities and values past any clock, either
//! runs or is refused with exit 2 naming the flag.

const BIN: &str = env!("CARGO_BIN_EXE_vmc-average");

#[test]
fn no_flag_value_panics() {
    let base = ["-l", "127.0.0.1:0", "--to", "127.0.0.1:9", "--smooth"];
    let timed = [base.as_slice(), &["--duration", "200ms"]].concat();
    mocap_testutil::sweep_number_flags(BIN, &[], &timed, |f| f != "--duration");
    let counted = [base.as_slice(), &["--count", "1"]].concat();
    mocap_testutil::sweep_number_flags(BIN, &[], &counted, |f| f == "--duration");
}

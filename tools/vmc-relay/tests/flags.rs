//! No flag value panics: every number-valued flag that `--help` lists,
//! given zero, negatives, NaN, infinities and values past any clock, either
//! runs or is refused with exit 2 naming the flag.

const BIN: &str = env!("CARGO_BIN_EXE_vmc-relay");
const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures");

#[test]
fn no_flag_value_panics() {
    let read = format!("{CAPTURES}/vmc/body-60hz.pcapng");
    let base = ["-r", &read, "--topspeed", "--to", "127.0.0.1:9", "--smooth"];
    mocap_testutil::sweep_number_flags(BIN, &[], &base, |f| f != "--vmt-base");
    let base = [
        "-r",
        &read,
        "--topspeed",
        "--to",
        "127.0.0.1:9",
        "--as",
        "vmt",
    ];
    mocap_testutil::sweep_number_flags(BIN, &[], &base, |_| true);
}

/// The held-out repro: a rate limit and a capture, whose end flushes the
/// held values at the clock's end (it overflowed there, exit 101).
#[test]
fn a_rate_limit_to_the_end_of_a_capture() {
    let read = format!("{CAPTURES}/vmc/body-60hz.pcapng");
    for rate in ["0.01", "1", "30"] {
        let p = mocap_testutil::Proc::spawn(
            BIN,
            &[
                "-r",
                &read,
                "--topspeed",
                "--to",
                "127.0.0.1:9",
                "--max-rate",
                rate,
            ],
            None,
        );
        let done = p.finish();
        assert_eq!(done.code, Some(0), "--max-rate {rate}: {}", done.stderr);
    }
}

//! No flag value panics: every number-valued flag that `--help` lists,
//! given zero, negatives, NaN, infinities and values past any clock, either
//! runs or is refused with exit 2 naming the flag.

const BIN: &str = env!("CARGO_BIN_EXE_pcap-replay");
const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures");

#[test]
fn no_flag_value_panics() {
    let read = format!("{CAPTURES}/mocopi/mocopi-frame-loss.pcapng");
    // --speed and --pps pace; the capture is a tenth of a second long.
    let base = [read.as_str(), "--to", "127.0.0.1:9", "--duration", "1s"];
    mocap_testutil::sweep_number_flags(BIN, &[], &base, |f| f != "--duration");
    let base = [read.as_str(), "--to", "127.0.0.1:9"];
    mocap_testutil::sweep_number_flags(BIN, &[], &base, |f| {
        f != "--loop" && f != "--pps" && f != "--speed"
    });
}

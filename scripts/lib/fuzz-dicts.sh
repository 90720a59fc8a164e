# The dictionary of each cargo-fuzz target (fuzz/dicts/<name>.dict), for
# scripts/fuzz.sh and scripts/fuzz-campaign.sh: targets reading the same
# protocol share one.
dict_for() {
    case "$1" in
        smf|renumber) echo smf ;;
        osc_vmc_differential|vmc_typed|vmc_route) echo osc ;;
        smooth|tracker_stream|dlp3d_server) echo floats ;;
        parse_mapping) echo mapping ;;
        ifm_frame|ifm_tcp) echo ifm ;;
        *) echo "$1" ;;
    esac
}

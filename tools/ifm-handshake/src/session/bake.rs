//! Bake mode: the recorded animation, fetched over TCP.

use super::*;

/// Bake mode: ask for the recorded animation and receive it on TCP.
pub(super) fn run_bake(
    opts: &Options,
    listen: SocketAddr,
    out_path: Option<&PathBuf>,
) -> anyhow::Result<()> {
    let listener =
        TcpListener::bind(listen).with_context(|| format!("failed to listen on TCP {listen}"))?;
    listener.set_nonblocking(true)?;
    let log = Log::new(TOOL, opts.log.quiet, true);
    log.info(format_args!(
        "listening on TCP {} for the recording",
        listener.local_addr()?
    ));
    let Some(phone) = opts.phone_addr(Command::Bake) else {
        bail!("--bake needs the phone's address (PHONE_HOST)");
    };
    let commands = command_socket(opts)?;
    let deadline = opts
        .stop
        .duration
        .and_then(|d| Instant::now().checked_add(d));
    let mut last_send: Option<Instant> = None;
    // Waiting for the phone: the command is re-sent every --keepalive.
    let mut stream = loop {
        if interrupted() || deadline.is_some_and(|d| Instant::now() >= d) {
            log.always(format_args!("stopped before the phone sent a recording"));
            return Ok(());
        }
        if last_send.is_none_or(|t| t.elapsed() >= opts.keepalive) {
            send(&commands, phone, Command::Bake)?;
            log.info(format_args!("sent the bake command to {phone}"));
            last_send = Some(Instant::now());
        }
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(POLL),
            Err(e) => return Err(e).context("failed to accept the phone's connection"),
        }
    };
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(POLL))?;
    let mut data = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let term = ifm::TERMINATOR.as_bytes();
    let mut last_byte = Instant::now();
    loop {
        if interrupted() || deadline.is_some_and(|d| Instant::now() >= d) {
            log.always(format_args!(
                "stopped with the recording incomplete ({} bytes received)",
                data.len()
            ));
            return Ok(());
        }
        // A phone that stops sending mid-recording would otherwise hang us.
        if last_byte.elapsed() >= BAKE_STALL {
            anyhow::bail!(
                "the phone stopped sending the recording ({} bytes received, nothing for {:?})",
                data.len(),
                BAKE_STALL
            );
        }
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                last_byte = Instant::now();
                data.extend_from_slice(buf.get(..n).unwrap_or_default());
                if data.len() > MAX_RECORDING {
                    anyhow::bail!("the recording is larger than {MAX_RECORDING} bytes");
                }
                if data.ends_with(term) {
                    break;
                }
            }
            Err(e) if net::is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("failed to receive the recording"),
        }
    }
    let frames = ifm::parse_recording(&data)?;
    let bad = frames
        .iter()
        .filter(|f| ifm::parse(f.as_bytes()).is_err())
        .count();
    let json = data.strip_suffix(term).unwrap_or(&data);
    if let Some(path) = out_path {
        fs::write(path, json).with_context(|| format!("failed to write {}", path.display()))?;
    }
    let duration = frames.len() as f64 / ifm::RECORDING_FPS;
    let mut out = Output::stdout(false);
    match opts.format {
        OutputFormat::Json => out.json(&RecordingRecord {
            kind: "ifm.recording",
            frames: frames.len(),
            bad_frames: bad,
            duration_s: round3(duration),
            bytes: json.len(),
            out: out_path.map(|p| p.display().to_string()),
        })?,
        _ => out.text(format_args!(
            "recording: {} frames ({bad} unreadable), {duration:.2} s at 60 fps, {} bytes{}\n",
            frames.len(),
            json.len(),
            out_path.map_or_else(String::new, |p| format!(", written to {}", p.display()))
        ))?,
    }
    out.flush()?;
    Ok(())
}

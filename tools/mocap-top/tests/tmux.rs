//! The screen in a real terminal: tmux runs `mocap-top -l …` four times
//! while four `pcap-replay`s play the mocopi, Live Link Face, iFacialMocap
//! and VMC captures into its ports; `capture-pane` reads the screen as a
//! person would. Unix only (tmux).
#![cfg(unix)]
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

use mocap_testutil::Proc;

const BIN: &str = env!("CARGO_BIN_EXE_mocap-top");
const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures");

/// The captures and the name each protocol has in the table.
const FOUR: [(&str, &str); 4] = [
    ("mocopi/wave-60hz.pcapng", "mocopi"),
    ("livelink/face-60fps.pcapng", "Live Link Face"),
    ("ifacialmocap/face-60fps.pcapng", "iFacialMocap"),
    ("vmc/body-60hz.pcapng", "VMC (OSC)"),
];

/// A tmux server of this test's own (`-L`), killed when the test ends.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs (scripts/test-all.sh installs it)");
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> Vec<String> {
        self.run(&["capture-pane", "-p", "-t", "top"])
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The screen once `ready` says it is, within 10 s.
    fn wait_for(&self, what: &str, ready: impl Fn(&[String]) -> bool) -> Vec<String> {
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            let s = self.screen();
            if ready(&s) {
                return s;
            }
            assert!(
                Instant::now() < until,
                "no {what} within 10 s:\n{}",
                s.join("\n")
            );
            sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

/// The line of the table row on `port`, and its index.
fn row(screen: &[String], port: u16) -> Option<(usize, &str)> {
    let port = format!(" {port} ");
    screen
        .iter()
        .enumerate()
        .find(|(_, l)| l.contains(&port) && l.contains("127.0.0.1:"))
        .map(|(i, l)| (i, l.as_str()))
}

/// The RATE/s column of a wide row: the field after the sender.
fn rate(line: &str) -> f64 {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let at = fields
        .iter()
        .position(|f| f.starts_with("127.0.0.1:"))
        .unwrap();
    fields[at + 1].parse().unwrap()
}

#[test]
#[ignore = "needs tmux: scripts/test-all.sh"]
fn four_streams_in_a_real_terminal_update_in_place_drill_down_and_quit() {
    let replay = mocap_testutil::tool(BIN, "pcap-replay");
    let dir = std::env::temp_dir().join(format!("mocap-top-tmux-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let status = dir.join("exit");
    let tmux = Tmux {
        socket: format!("mocap-top-test-{}", std::process::id()),
    };
    let command = format!(
        "{BIN} -l 127.0.0.1:0 -l 127.0.0.1:0 -l 127.0.0.1:0 -l 127.0.0.1:0; echo $? > {}",
        status.display()
    );
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "top",
        "-x",
        "120",
        "-y",
        "40",
        "sh",
        "-c",
        &command,
    ]);
    let s = tmux.wait_for("listening line", |s| {
        s.iter().any(|l| l.starts_with("listening on"))
    });
    let ports: Vec<SocketAddr> = s
        .iter()
        .find(|l| l.starts_with("listening on"))
        .unwrap()
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(ports.len(), 4, "{s:?}");
    let replays: Vec<Proc> = FOUR
        .iter()
        .zip(&ports)
        .map(|((file, _), to)| {
            Proc::spawn(
                replay.to_str().unwrap(),
                &["-q", "--to", &to.to_string(), &format!("{CAPTURES}/{file}")],
                None,
            )
        })
        .collect();
    // Past the Live Link capture's first second, where a second phone
    // sends too (120 frames/s from that sender), and with a full second
    // of each stream behind.
    sleep(Duration::from_millis(2100));
    let mut shots = Vec::new();
    for _ in 0..4 {
        shots.push(tmux.screen());
        sleep(Duration::from_millis(300));
    }
    for shot in &shots {
        for ((file, name), port) in FOUR.iter().zip(&ports) {
            let (_, line) = row(shot, port.port())
                .unwrap_or_else(|| panic!("no row for {file}:\n{}", shot.join("\n")));
            assert!(line.starts_with(name), "{file}: {line}");
            let r = rate(line);
            assert!((r - 60.0).abs() <= 6.0, "{file}: rate {r} in {line}");
        }
    }
    // In place: every stream keeps its line while its numbers change.
    let at = |shot: &[String], port: u16| row(shot, port).unwrap().0;
    for port in &ports {
        let first = at(&shots[0], port.port());
        assert!(
            shots.iter().all(|s| at(s, port.port()) == first),
            "{port} moved"
        );
    }
    assert!(
        shots.windows(2).any(|w| w[0] != w[1]),
        "the numbers never changed:\n{}",
        shots[0].join("\n")
    );
    // Enter drills into the first row, Esc comes back.
    tmux.run(&["send-keys", "-t", "top", "Enter"]);
    let s = tmux.wait_for("drill-down", |s| {
        s.iter()
            .any(|l| l.contains(" on 127.0.0.1:") && l.contains(" from 127.0.0.1:"))
    });
    // A body opens on its stick figure (braille), a face on its bars.
    assert!(
        s.iter().any(|l| l.starts_with("front · ")
            || l.starts_with("BONE")
            || l.trim_start().starts_with("head")),
        "{}",
        s.join("\n")
    );
    tmux.run(&["send-keys", "-t", "top", "Escape"]);
    tmux.wait_for("the table again", |s| {
        s.iter().any(|l| l.starts_with("PROTOCOL"))
    });
    for r in replays {
        assert_eq!(r.finish().code, Some(0));
    }
    tmux.run(&["send-keys", "-t", "top", "q"]);
    let until = Instant::now() + Duration::from_secs(10);
    let code = loop {
        if let Ok(text) = std::fs::read_to_string(&status)
            && !text.trim().is_empty()
        {
            break text.trim().to_owned();
        }
        assert!(Instant::now() < until, "mocap-top did not quit on q");
        sleep(Duration::from_millis(50));
    };
    assert_eq!(code, "0");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A terminal that goes away (a tmux pane or ssh session killed) ends
/// mocap-top as `q` does, and its ports are free again. The shell it runs
/// under stays the session leader, so the hangup's SIGHUP goes to the shell
/// alone: mocap-top has only its terminal's end to go by. Before the fix it
/// was left spinning on `read(0) = 0`, holding the port, in about half
/// the runs (six runs here).
#[test]
#[ignore = "needs tmux: scripts/test-all.sh"]
fn a_terminal_that_goes_away_ends_it_and_frees_the_port() {
    for run in 0..6 {
        let port = std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let tmux = Tmux {
            socket: format!("mocap-top-hangup-{}-{run}", std::process::id()),
        };
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "top",
            "-x",
            "100",
            "-y",
            "30",
            &format!("{BIN} -l 127.0.0.1:{port}; sleep 60"),
        ]);
        tmux.wait_for("listening line", |s| {
            s.iter().any(|l| l.starts_with("listening on"))
        });
        // As in the report: a second of the screen being up.
        sleep(Duration::from_secs(1));
        tmux.run(&["kill-server"]);
        let until = Instant::now() + Duration::from_secs(5);
        while std::net::UdpSocket::bind(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < until,
                "run {run}: port {port} still held 5 s after the terminal went away"
            );
            sleep(Duration::from_millis(50));
        }
    }
}

/// Where the run's `echo $?` goes, and the code once it is there (10 s).
fn exit_code(status: &Path, what: &str) -> String {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(text) = std::fs::read_to_string(status)
            && !text.trim().is_empty()
        {
            return text.trim().to_owned();
        }
        assert!(Instant::now() < until, "mocap-top did not quit on {what}");
        sleep(Duration::from_millis(50));
    }
}

/// `tcpdump -U -w - | mocap-top -r -` once the sender stops: the pipe stays
/// open and nothing comes. The row goes stale by the wall clock, text
/// another program writes over the screen goes with Ctrl-L, and q quits.
/// Before, the run waited in the capture's read: the row stayed live and
/// q was not seen until another datagram came.
#[test]
#[ignore = "needs tmux: scripts/test-all.sh"]
fn a_live_capture_on_stdin_that_goes_quiet_goes_stale_redraws_and_quits() {
    let dir = std::env::temp_dir().join(format!("mocap-top-quiet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let status = dir.join("exit");
    let tmux = Tmux {
        socket: format!("mocap-top-quiet-{}", std::process::id()),
    };
    let command = format!(
        "(cat {CAPTURES}/mocopi/wave-60hz.pcapng; sleep 60) | ({BIN} -r -; echo $? > {})",
        status.display()
    );
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "top",
        "-x",
        "120",
        "-y",
        "30",
        "sh",
        "-c",
        &command,
    ]);
    tmux.wait_for("a live mocopi row", |s| {
        s.iter()
            .any(|l| l.starts_with("mocopi") && l.contains(" 60.0 "))
    });
    // The capture plays for 4 s at its recorded timing; a second later the
    // row is stale.
    tmux.wait_for("the row going stale", |s| {
        s.iter()
            .any(|l| l.starts_with("mocopi") && l.trim_end().ends_with("stale"))
    });
    // Another program writes over the screen (tcpdump's "listening on").
    let tty = tmux.run(&["display-message", "-p", "-t", "top", "#{pane_tty}"]);
    std::fs::write(tty.trim(), "\r\nSCRIBBLED BY ANOTHER PROGRAM\r\n").unwrap();
    tmux.wait_for("the scribble", |s| {
        s.iter().any(|l| l.contains("SCRIBBLED"))
    });
    tmux.run(&["send-keys", "-t", "top", "C-l"]);
    let s = tmux.wait_for("the screen painted afresh", |s| {
        !s.iter().any(|l| l.contains("SCRIBBLED"))
    });
    assert!(s[0].starts_with("mocap-top"), "{}", s.join("\n"));
    tmux.run(&["send-keys", "-t", "top", "q"]);
    let code = exit_code(&status, "q");
    assert_eq!(code, "0", "{}", tmux.screen().join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A capture file that has been played says so on the screen, which stays
/// until q.
#[test]
#[ignore = "needs tmux: scripts/test-all.sh"]
fn the_end_of_a_capture_file_is_shown() {
    let tmux = Tmux {
        socket: format!("mocap-top-end-{}", std::process::id()),
    };
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "top",
        "-x",
        "120",
        "-y",
        "30",
        &format!("{BIN} -r {CAPTURES}/mocopi/mocopi-frame-loss.pcapng; sleep 60"),
    ]);
    let s = tmux.wait_for("the end-of-input notice", |s| {
        s.first().is_some_and(|l| l.contains("END OF INPUT"))
    });
    assert!(
        s.iter().any(|l| l.starts_with("mocopi")),
        "{}",
        s.join("\n")
    );
}

/// Braille dots in a screen: the stick figure's.
fn braille(screen: &[String]) -> String {
    screen
        .iter()
        .flat_map(|l| l.chars())
        .filter(|c| ('\u{2801}'..='\u{28ff}').contains(c))
        .collect()
}

/// The mocopi capture's drill-down in a real terminal is a stick figure
/// that moves while the capture plays (the arm waves), at 80×24 and 160×45.
#[test]
#[ignore = "needs tmux: scripts/test-all.sh"]
fn the_mocopi_figure_moves_in_a_real_terminal() {
    for (w, h) in [("80", "24"), ("160", "45")] {
        let tmux = Tmux {
            socket: format!("mocap-top-figure-{}-{w}", std::process::id()),
        };
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "top",
            "-x",
            w,
            "-y",
            h,
            &format!("{BIN} -r {CAPTURES}/mocopi/wave-60hz.pcapng; sleep 60"),
        ]);
        tmux.wait_for("the mocopi row", |s| {
            s.iter().any(|l| l.starts_with("mocopi"))
        });
        tmux.run(&["send-keys", "-t", "top", "Enter"]);
        let first = tmux.wait_for("the figure", |s| {
            s.iter().any(|l| l.starts_with("front · ")) && braille(s).chars().count() > 30
        });
        // The capture lasts 4 s: its arm moves within a second.
        let until = Instant::now() + Duration::from_secs(3);
        let moved = loop {
            sleep(Duration::from_millis(150));
            let s = tmux.screen();
            if braille(&s) != braille(&first) {
                break s;
            }
            assert!(
                Instant::now() < until,
                "{w}×{h}: the figure never moved:\n{}",
                first.join("\n")
            );
        };
        assert!(
            moved.iter().any(|l| l.contains("side · facing →")),
            "{}",
            moved.join("\n")
        );
    }
}

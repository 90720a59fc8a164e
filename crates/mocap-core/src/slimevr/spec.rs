//! SlimeVR's row of the registry ([`crate::protocol`]).

use crate::osc::Arg;
use crate::protocol::{Args, Carries, Confidence, Fact, Spec, Stamp, View};
use crate::quat::wide;
use crate::vmc::trackers::unity_euler;

use super::{BOARDS, DEFAULT_PORT, GREETING, IMUS, MCUS, Message, Packet, name_of, parse};

/// SlimeVR's tracker protocol in the registry. It has no dump tool of its
/// own: mocap-top decodes it.
pub const SPEC: Spec = Spec {
    name: "SlimeVR",
    key: "slimevr",
    label: "slimevr",
    ports: &[DEFAULT_PORT],
    sniff,
    decode,
    stamp,
    face: None,
    body: None,
    carries: Carries::Trackers,
    renumber: None,
    ask: None,
    answer: Some(|| Box::new(super::answer::Answerer::new())),
    tool: "mocap-dump",
    dissector: Some("slimevr"),
};

/// Packet numbers at or above this are no tracker's: 2⁴⁰ packets are 35
/// years at a thousand a second.
const MAX_NUMBER: u64 = 1 << 40;

/// Certain when the whole datagram is a layout the sources name, with a
/// believable number and no bytes left over (the handshake answer: the
/// greeting, then zeros); likely when only its header is believable (a
/// cut packet, a type no source names, bytes after the fields).
fn sniff(d: &[u8]) -> Option<Confidence> {
    let header = || {
        let kind = u32::from_be_bytes(*d.first_chunk::<4>()?);
        let number = u64::from_be_bytes(*d.get(4..)?.first_chunk::<8>()?);
        (kind < 256 && number < MAX_NUMBER).then_some(kind)
    };
    match parse(d) {
        Ok(p) if certain(&p, d) => Some(Confidence::Certain),
        _ => header().map(|_| Confidence::Likely),
    }
}

fn certain(p: &Packet<'_>, d: &[u8]) -> bool {
    if !p.warnings().is_empty() || p.number.is_some_and(|n| n >= MAX_NUMBER) {
        return false;
    }
    match p.message {
        Message::HandshakeAnswer { text } => {
            text.starts_with(GREETING)
                && d.get(1 + text.len()..)
                    .is_some_and(|rest| rest.iter().all(|b| *b == 0))
        }
        Message::SensorAck { status, .. } => status <= 2,
        Message::Bundle(b) => !b.is_empty() && p.message.is_known(),
        ref m => m.is_known(),
    }
}

/// What one datagram is for the tracker's health: its packet number is the
/// frame (low 32 bits: 49 days of a thousand a second before they wrap),
/// every numbered packet counting since each takes a number. The handshake
/// starts a new session; pings and pongs are not frames; what is numbered 0
/// (the server's packets, and a tracker's first after power-on) is outside
/// the sequence.
fn stamp_of(p: &Packet<'_>) -> Stamp {
    match (p.message, p.number) {
        (Message::Handshake(_), _) => Stamp::Handshake,
        (Message::Ping { .. }, _) => Stamp::Sensor,
        (_, None | Some(0)) => Stamp::Unnumbered { ends_frame: false },
        (_, Some(n)) => Stamp::Numbered {
            frame: (n & u64::from(u32::MAX)) as u32,
            clock: None,
            part: 0,
        },
    }
}

fn stamp(d: &[u8]) -> Stamp {
    parse(d).map_or(Stamp::Error, |p| stamp_of(&p))
}

/// Each sensor's rotation as a tracker slot named by its sensor id (Unity's
/// Euler angles of the quaternion as sent), and every packet as a named
/// row of values: rotations by sensor (their rate is the sensor's), the
/// handshake (board, IMU, MCU, build, firmware, MAC), battery (volts, level
/// 0–1 as sent), signal (dBm), temperature, and the rest by name.
fn decode(d: &[u8], view: &mut dyn View) -> Stamp {
    let Ok(p) = parse(d) else {
        return Stamp::Error;
    };
    match p.message {
        Message::Bundle(b) => b.messages().for_each(|m| show(&m, view)),
        ref m => show(m, view),
    }
    stamp_of(&p)
}

/// A sensor id as text without allocating.
struct Id {
    buf: [u8; 3],
    len: usize,
}

impl Id {
    fn new(id: u8) -> Self {
        let mut buf = [b'0'; 3];
        let digits = [id / 100, id / 10 % 10, id % 10];
        let skip = if id >= 100 {
            0
        } else if id >= 10 {
            1
        } else {
            2
        };
        for (b, d) in buf.iter_mut().zip(digits.iter().skip(skip)) {
            *b = b'0' + d;
        }
        Self { buf, len: 3 - skip }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(self.buf.get(..self.len).unwrap_or_default()).unwrap_or_default()
    }
}

fn show(m: &Message<'_>, view: &mut dyn View) {
    let name = m.name();
    let float = |v: f32| Arg::Float(v);
    let int = |v: i64| Arg::Int(i32::try_from(v).unwrap_or(i32::MAX));
    let rotation = |view: &mut dyn View, sensor: u8, q: [f32; 4], more: &[Arg]| {
        let id = Id::new(sensor);
        let e = unity_euler(wide(q)).map(|v| v as f32);
        view.slot(id.as_str(), None, Some(e));
        let mut args = q.map(float).to_vec();
        args.extend_from_slice(more);
        view.message(name, Some(id.as_str()), Args::Osc(&args));
    };
    let per_sensor = |view: &mut dyn View, sensor: u8, args: &[Arg]| {
        view.message(name, Some(Id::new(sensor).as_str()), Args::Osc(args));
    };
    let text = |b: &[u8]| Arg::String(String::from_utf8_lossy(b).into_owned());
    match *m {
        Message::Rotation { sensor, quat } => rotation(view, sensor, quat, &[]),
        Message::RotationData {
            sensor,
            data_type,
            quat,
            accuracy,
        } => rotation(
            view,
            sensor,
            quat,
            &[int(data_type.into()), int(accuracy.into())],
        ),
        Message::RotationAccel {
            sensor,
            quat,
            accel,
        } => {
            let q = quat.map(|v| f32::from(v) / 32768.0);
            let a = accel.map(|v| float(f32::from(v) / 128.0));
            rotation(view, sensor, q, &a);
        }
        Message::Handshake(h) => {
            let mac = h.mac.map(|m| {
                m.iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<Vec<_>>()
                    .join(":")
            });
            let args = [
                int(h.board.unwrap_or(-1).into()),
                int(h.imu.unwrap_or(-1).into()),
                int(h.mcu.unwrap_or(-1).into()),
                int(h.build.unwrap_or(-1).into()),
                text(h.firmware.unwrap_or_default()),
                Arg::String(mac.unwrap_or_default()),
            ];
            view.message(name, None, Args::Osc(&args));
            let named = |view: &mut dyn View, what, table: &[&'static str], id: Option<i32>| {
                if let Some(id) = id {
                    view.device(
                        what,
                        name_of(table, id.into())
                            .map_or_else(|| Fact::Number(id.into()), Fact::Text),
                    );
                }
            };
            named(view, "board", &BOARDS, h.board);
            named(view, "mcu", &MCUS, h.mcu);
            named(view, "imu", &IMUS, h.imu);
            if let Some(b) = h.build {
                view.device("firmware_build", Fact::Number(b.into()));
            }
            if let Some(f) = h.firmware {
                view.device("firmware", Fact::Text(&String::from_utf8_lossy(f)));
            }
            if let Some(Arg::String(m)) = args.last().filter(|_| h.mac.is_some()) {
                view.device("mac", Fact::Text(m));
            }
        }
        Message::HandshakeAnswer { text: t } => view.message(name, None, Args::Osc(&[text(t)])),
        Message::Accel {
            sensor: Some(sensor),
            accel,
        } => per_sensor(view, sensor, &accel.map(float)),
        Message::Accel {
            sensor: None,
            accel,
        } => view.message(name, None, Args::Osc(&accel.map(float))),
        Message::Battery { volts, level } => {
            let args = [float(volts.unwrap_or(f32::NAN)), float(level)];
            view.message(name, None, Args::Osc(&args));
            view.device("battery_level", Fact::Number(level.into()));
            if let Some(v) = volts {
                view.device("battery_v", Fact::Number(v.into()));
            }
        }
        Message::Signal { sensor, dbm } => {
            per_sensor(view, sensor, &[int(dbm.into())]);
            view.device("rssi_dbm", Fact::Number(dbm.into()));
        }
        Message::Temperature { sensor, celsius } => {
            per_sensor(view, sensor, &[float(celsius)]);
            view.device("temperature_c", Fact::Number(celsius.into()));
        }
        Message::MagAccuracy { sensor, accuracy } => per_sensor(view, sensor, &[float(accuracy)]),
        Message::Flex { sensor, level } => per_sensor(view, sensor, &[float(level)]),
        Message::Position { sensor, pos } => {
            view.slot(Id::new(sensor).as_str(), Some(pos), None);
            per_sensor(view, sensor, &pos.map(float));
        }
        Message::Tap { sensor, value } => per_sensor(view, sensor, &[int(value.into())]),
        Message::SensorError { sensor, code } => per_sensor(view, sensor, &[int(code.into())]),
        Message::SensorAck { sensor, status } => per_sensor(view, sensor, &[int(status.into())]),
        Message::SensorInfo(s) => {
            let opt = |v: Option<u8>| int(v.map_or(-1, i64::from));
            let args = [
                int(s.status.into()),
                opt(s.imu),
                opt(s.position),
                opt(s.data_type),
            ];
            per_sensor(view, s.sensor, &args);
        }
        Message::ConfigAck { sensor, config } => per_sensor(view, sensor, &[int(config.into())]),
        Message::SetConfigFlag {
            sensor,
            flag,
            state,
        } => per_sensor(view, sensor, &[int(flag.into()), int(state.into())]),
        Message::Ping { id } => view.message(name, None, Args::Osc(&[int(id.into())])),
        Message::UserAction { action } => {
            view.message(name, None, Args::Osc(&[int(action.into())]));
        }
        Message::ProtocolChange { protocol, version } => {
            let args = [int(protocol.into()), int(version.into())];
            view.message(name, None, Args::Osc(&args));
        }
        Message::FeatureFlags { flags: b }
        | Message::Serial { text: b }
        | Message::Inspection { body: b } => {
            view.message(name, None, Args::Osc(&[Arg::Blob(b.to_vec())]));
        }
        Message::Unknown { kind: k, body } => {
            let address = format!("unknown type {k}");
            view.message(&address, None, Args::Osc(&[int(body.len() as i64)]));
        }
        Message::Heartbeat | Message::ServerHeartbeat | Message::Bundle(_) => {
            view.message(name, None, Args::Osc(&[]));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        reason = "test code: a panic is how a test reports"
    )]

    use super::*;

    #[test]
    fn sensor_ids_are_their_digits() {
        for (id, s) in [
            (0, "0"),
            (7, "7"),
            (10, "10"),
            (99, "99"),
            (100, "100"),
            (255, "255"),
        ] {
            assert_eq!(Id::new(id).as_str(), s);
        }
    }

    /// The facts a decode gives, as text.
    #[derive(Default)]
    struct Facts(Vec<String>);

    impl View for Facts {
        fn device(&mut self, what: &'static str, value: Fact<'_>) {
            self.0.push(format!("{what}={value:?}"));
        }
    }

    fn packet(kind: u32, number: u64, body: &[u8]) -> Vec<u8> {
        let mut d = kind.to_be_bytes().to_vec();
        d.extend(number.to_be_bytes());
        d.extend(body);
        d
    }

    #[test]
    fn the_handshake_battery_and_signal_are_device_facts() {
        let mut body = Vec::new();
        // Board 9 (SlimeVR), IMU 12 (LSM6DS3TR-C), MCU 2 (ESP32), IMU
        // info, build 22, then an IMU number past the table.
        for v in [9i32, 12, 2, 0, 0, 0, 22] {
            body.extend(v.to_be_bytes());
        }
        body.push(5);
        body.extend(b"0.6.3");
        body.extend([0x3c, 0x61, 0x05, 0x12, 0x34, 0x56]);
        let mut facts = Facts::default();
        decode(&packet(3, 0, &body), &mut facts);
        assert_eq!(
            facts.0,
            [
                r#"board=Text("SlimeVR")"#,
                r#"mcu=Text("ESP32")"#,
                r#"imu=Text("LSM6DS3TR-C")"#,
                "firmware_build=Number(22.0)",
                r#"firmware=Text("0.6.3")"#,
                r#"mac=Text("3c:61:05:12:34:56")"#,
            ]
        );
        // Past the tables: the number as sent.
        body[4..8].copy_from_slice(&99i32.to_be_bytes());
        let mut facts = Facts::default();
        decode(&packet(3, 0, &body), &mut facts);
        assert_eq!(facts.0[2], "imu=Number(99.0)");

        // Battery: volts then level (0.5 exactly), signal -61 dBm.
        let mut b = 3.75f32.to_be_bytes().to_vec();
        b.extend(0.5f32.to_be_bytes());
        let mut facts = Facts::default();
        decode(&packet(12, 7, &b), &mut facts);
        decode(&packet(19, 8, &[255, 0xc3]), &mut facts);
        assert_eq!(
            facts.0,
            [
                "battery_level=Number(0.5)",
                "battery_v=Number(3.75)",
                "rssi_dbm=Number(-61.0)"
            ]
        );
    }

    #[test]
    fn numbers_are_frames_and_the_rest_is_not() {
        let numbered = |kind: u32, number: u64, body: &[u8]| {
            let mut d = kind.to_be_bytes().to_vec();
            d.extend(number.to_be_bytes());
            d.extend(body);
            d
        };
        let stamp_at = |n| stamp(&numbered(19, n, &[255, 200]));
        assert_eq!(
            stamp_at(0x1_0000_0005),
            Stamp::Numbered {
                frame: 5,
                clock: None,
                part: 0
            }
        );
        assert_eq!(stamp_at(0), Stamp::Unnumbered { ends_frame: false });
        assert_eq!(stamp(&numbered(3, 0, &[])), Stamp::Handshake);
        assert_eq!(stamp(&numbered(10, 0, &[0, 0, 0, 9])), Stamp::Sensor);
        assert_eq!(stamp(&numbered(19, 3, &[255])), Stamp::Error);
        assert_eq!(sniff(&numbered(19, 3, &[255])), Some(Confidence::Likely));
        assert_eq!(
            sniff(&numbered(19, 3, &[255, 1])),
            Some(Confidence::Certain)
        );
        assert_eq!(
            sniff(&numbered(19, 3, &[255, 1, 0])),
            Some(Confidence::Likely)
        );
        assert_eq!(sniff(&numbered(19, MAX_NUMBER, &[255, 1])), None);
        assert_eq!(sniff(&numbered(99, 3, &[])), Some(Confidence::Likely));
        assert_eq!(sniff(&numbered(0x0100, 3, &[])), None);
        assert_eq!(sniff(&[0, 0, 0, 0]), None);
    }
}

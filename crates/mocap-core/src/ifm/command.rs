//! The strings a PC sends to the phone, and the ports involved: one place.

/// The phone listens for commands on this UDP port (iFacialMocap).
pub const PHONE_PORT: u16 = 49983;
/// Facemotion3d listens for its start command on this UDP port.
pub const FM_PHONE_PORT: u16 = 49993;
/// The phone streams UDP frames to this PC port.
pub const PC_UDP_PORT: u16 = 49983;
/// In TCP mode the phone connects to this PC port. (The vendor's English page
/// says 49896, a typo: every implementation and the vendor's v3 text use 49986.)
pub const PC_TCP_PORT: u16 = 49986;
/// The phone sends a baked recording to this PC TCP port.
pub const PC_BAKE_PORT: u16 = 49987;
/// Ends each frame on TCP, and a recording.
pub const TERMINATOR: &str = "___iFacialMocap";

const KEY: &str = "sahuasouryya9218sauhuiayeta91555dy3719";
const V2_SUFFIX: &str = "|sendDataVersion=v2";

/// What a PC can ask the phone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Stream one UDP datagram per frame to the sender's address, port 49983.
    StartUdp {
        /// `&` between names and values (allows negative values).
        v2: bool,
    },
    /// Connect to the sender on TCP 49986 and stream frames ending in [`TERMINATOR`].
    StartTcp {
        /// `&` frames.
        v2: bool,
    },
    /// Stop the TCP stream.
    StopTcp,
    /// Send the recorded animation to TCP 49987.
    Bake,
    /// Re-centre ("Look Forward" button).
    LookForward,
    /// Facemotion3d's start command (to phone port 49993).
    FacemotionStart,
}

impl Command {
    /// The exact text to send (UTF-8, no terminator).
    pub fn text(self) -> String {
        let v2 = |on: bool| if on { V2_SUFFIX } else { "" };
        match self {
            Self::StartUdp { v2: on } => format!("iFacialMocap_{KEY}{}", v2(on)),
            Self::StartTcp { v2: on } => format!("iFacialMocap_UDPTCP_{KEY}{}", v2(on)),
            Self::StopTcp => format!("iFacialMocap_UDPTCPSTOP_{KEY}"),
            Self::Bake => "iFacialMocap_bakeRecordedAnimation_start".to_owned(),
            Self::LookForward => "iFacialMocap_lookForward".to_owned(),
            Self::FacemotionStart => "FACEMOTION3D_OtherStreaming".to_owned(),
        }
    }

    /// The phone's UDP port for this command.
    pub fn phone_port(self) -> u16 {
        match self {
            Self::FacemotionStart => FM_PHONE_PORT,
            _ => PHONE_PORT,
        }
    }

    /// Reads a command datagram (for phone emulators and for dropping our own
    /// commands looped back to us).
    pub fn parse(bytes: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(bytes).ok()?;
        [
            Self::StartUdp { v2: false },
            Self::StartUdp { v2: true },
            Self::StartTcp { v2: false },
            Self::StartTcp { v2: true },
            Self::StopTcp,
            Self::Bake,
            Self::LookForward,
            Self::FacemotionStart,
        ]
        .into_iter()
        .find(|c| c.text() == text)
    }
}

/// Whether a datagram is a command (any app's) rather than a frame.
pub fn is_command(bytes: &[u8]) -> bool {
    bytes.starts_with(b"iFacialMocap_") || bytes.starts_with(b"FACEMOTION3D_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_strings_are_the_vendors() {
        assert_eq!(
            Command::StartUdp { v2: false }.text(),
            "iFacialMocap_sahuasouryya9218sauhuiayeta91555dy3719"
        );
        assert_eq!(
            Command::StartUdp { v2: true }.text(),
            "iFacialMocap_sahuasouryya9218sauhuiayeta91555dy3719|sendDataVersion=v2"
        );
        assert_eq!(
            Command::StartTcp { v2: false }.text(),
            "iFacialMocap_UDPTCP_sahuasouryya9218sauhuiayeta91555dy3719"
        );
        assert_eq!(
            Command::StopTcp.text(),
            "iFacialMocap_UDPTCPSTOP_sahuasouryya9218sauhuiayeta91555dy3719"
        );
        assert_eq!(Command::FacemotionStart.phone_port(), 49993);
        for c in [
            Command::Bake,
            Command::LookForward,
            Command::StartTcp { v2: true },
        ] {
            assert_eq!(Command::parse(c.text().as_bytes()), Some(c));
            assert!(is_command(c.text().as_bytes()));
        }
        assert!(!is_command(b"trackingStatus-1|"));
    }
}

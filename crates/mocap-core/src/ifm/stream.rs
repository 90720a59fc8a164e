//! Frames out of a TCP byte stream: each ends in `___iFacialMocap`.

use super::command::TERMINATOR;

/// Splits a byte stream into frames. Reads may hold half a frame or several;
/// memory stays under the cap: a frame that grows past it without a
/// terminator is dropped (counted) up to the next terminator.
#[derive(Debug)]
pub struct Splitter {
    buf: Vec<u8>,
    cap: usize,
    /// Bytes are being thrown away until the next terminator.
    skipping: bool,
    dropped: u64,
    /// Where to resume searching for a terminator (bytes before it have none).
    searched: usize,
}

impl Splitter {
    /// A splitter that holds at most `cap` bytes of an unfinished frame.
    pub fn new(cap: usize) -> Self {
        Self {
            buf: Vec::new(),
            cap: cap.max(TERMINATOR.len()),
            skipping: false,
            dropped: 0,
            searched: 0,
        }
    }

    /// Frames dropped for being longer than the cap.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Bytes of an unfinished frame held now.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// Adds bytes read from the stream; `out` receives each complete frame
    /// (without its terminator), in order.
    pub fn push(&mut self, mut data: &[u8], out: &mut impl FnMut(&[u8])) {
        let term = TERMINATOR.as_bytes();
        while !data.is_empty() {
            let room = self.cap.saturating_sub(self.buf.len()).max(1);
            let take = data.len().min(room);
            let (now, rest) = data.split_at(take);
            self.buf.extend_from_slice(now);
            data = rest;
            while let Some(pos) = find(self.buf.get(self.searched..).unwrap_or_default(), term) {
                let end = self.searched + pos;
                if self.skipping {
                    self.skipping = false;
                } else if let Some(frame) = self.buf.get(..end) {
                    out(frame);
                }
                self.buf.drain(..end + term.len());
                self.searched = 0;
            }
            // The tail may hold the start of a terminator; search from there next time.
            self.searched = self.buf.len().saturating_sub(term.len() - 1);
            if self.buf.len() >= self.cap {
                if !self.skipping {
                    self.dropped += 1;
                    self.skipping = true;
                }
                let keep = term.len() - 1;
                let cut = self.buf.len() - keep;
                self.buf.drain(..cut);
                self.searched = 0;
            }
        }
    }
}

/// First position of `needle` in `hay`: scans for its first byte, then compares.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut from = 0;
    while let Some(i) = hay.get(from..)?.iter().position(|&b| b == first) {
        let at = from + i;
        if hay.get(at + 1..at + needle.len()) == Some(rest) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(s: &mut Splitter, data: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        s.push(data, &mut |f| out.push(f.to_vec()));
        out
    }

    #[test]
    fn several_frames_per_read_and_split_terminators() {
        let mut s = Splitter::new(1024);
        assert_eq!(frames(&mut s, b"a|b___iFacialMocapc|"), [b"a|b".to_vec()]);
        assert!(frames(&mut s, b"d___iFacial").is_empty());
        assert_eq!(
            frames(&mut s, b"Mocape___iFacialMocap"),
            [b"c|d".to_vec(), b"e".to_vec()]
        );
        assert_eq!(s.pending(), 0);
    }

    #[test]
    fn overlong_frame_is_dropped_and_memory_stays_bounded() {
        let mut s = Splitter::new(64);
        for _ in 0..1000 {
            assert!(frames(&mut s, &[b'x'; 50]).is_empty());
            assert!(s.pending() <= 64);
        }
        assert_eq!(s.dropped(), 1);
        // The rest of the long frame ends at its terminator; the next frame is whole.
        assert_eq!(
            frames(&mut s, b"xx___iFacialMocapok___iFacialMocap"),
            [b"ok".to_vec()]
        );
    }
}

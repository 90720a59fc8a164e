//! OSC address patterns (`*`, `?`, `[a-z]`, `[!a]`, `{foo,bar}`), for filters.

use rosc::address::{Matcher, OscAddress};

/// A compiled OSC address pattern.
#[derive(Debug)]
pub struct Pattern {
    text: String,
    matcher: Matcher,
}

impl Pattern {
    /// Compiles a pattern.
    ///
    /// # Errors
    /// A message naming what is wrong with the pattern.
    pub fn new(text: &str) -> Result<Self, PatternError> {
        let matcher = Matcher::new(text).map_err(|e| PatternError {
            pattern: text.to_owned(),
            why: e.to_string(),
        })?;
        Ok(Self {
            text: text.to_owned(),
            matcher,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether an address matches; invalid addresses match nothing.
    pub fn matches(&self, address: &str) -> bool {
        OscAddress::new(address.to_owned()).is_ok_and(|a| self.matcher.match_address(&a))
    }
}

/// An OSC address pattern that does not parse.
#[derive(Debug)]
#[non_exhaustive]
pub struct PatternError {
    /// The pattern as given.
    pub pattern: String,
    /// Why it does not parse (rosc's words; its error type stays out of the API).
    why: String,
}

impl std::fmt::Display for PatternError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The cause is in the message too: clap shows only this line.
        write!(
            f,
            "bad OSC address pattern {:?}: {}",
            self.pattern, self.why
        )
    }
}

/// The cause is shown by `Display`, so there is no `source()` (an error
/// chain would print it twice).
impl std::error::Error for PatternError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vmc_patterns() {
        let p = Pattern::new("/VMC/Ext/Blend/*").unwrap();
        assert!(p.matches("/VMC/Ext/Blend/Val"));
        assert!(p.matches("/VMC/Ext/Blend/Apply"));
        assert!(!p.matches("/VMC/Ext/Bone/Pos"));
        let q = Pattern::new("/VMC/Ext/{Bone,Root}/Pos").unwrap();
        assert!(q.matches("/VMC/Ext/Root/Pos") && q.matches("/VMC/Ext/Bone/Pos"));
        let e = Pattern::new("no-slash").unwrap_err();
        assert_eq!(e.pattern, "no-slash");
        assert!(
            e.to_string()
                .starts_with("bad OSC address pattern \"no-slash\": ")
        );
        assert!(e.to_string().ends_with(&e.why));
        assert_eq!(q.as_str(), "/VMC/Ext/{Bone,Root}/Pos");
    }
}

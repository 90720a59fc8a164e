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
    pub fn new(text: &str) -> Result<Self, String> {
        let matcher =
            Matcher::new(text).map_err(|e| format!("bad OSC address pattern {text:?}: {e}"))?;
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
        assert!(Pattern::new("no-slash").is_err());
        assert_eq!(q.as_str(), "/VMC/Ext/{Bone,Root}/Pos");
    }
}

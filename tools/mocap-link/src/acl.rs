//! `mocap-link acl`: the router's access control for one show, written out
//! so that each performer is who their user name says. A performer may
//! publish only under `mocap/<room>/<their user>/**` (and answer probes
//! there, and find the datagram paths); a watcher (the studio) may
//! subscribe to the whole room and hand out its datagram path. Anything
//! else is denied: a performer who publishes under another name reaches
//! no one, and their publisher says "no subscriber takes …" (the rules
//! also keep other performers' subscribers from them).

use serde_json::{Value, json};

/// Who may do what in one room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Show {
    pub(crate) room: String,
    /// User names that perform (publish as themselves).
    pub(crate) performers: Vec<String>,
    /// User names that watch (subscribe to the room).
    pub(crate) watchers: Vec<String>,
}

/// The `access_control` section for a router's configuration.
pub(crate) fn rules(show: &Show) -> Value {
    let room = &show.room;
    let paths = format!("{}/{room}/{}/*", crate::key::ROOT, crate::key::DATAGRAMS);
    let all = format!("{}/{room}/**", crate::key::ROOT);
    let probes = format!("{}/{room}/*/{}", crate::key::ROOT, crate::key::PROBE);
    let rule = |id: String, flow: &str, messages: &[&str], keys: &[&str]| json!({ "id": id, "permission": "allow", "flows": [flow], "messages": messages, "key_exprs": keys });
    let mut rules = Vec::new();
    let mut subjects = Vec::new();
    let mut policies = Vec::new();
    for user in &show.performers {
        let own = format!("{}/{room}/{user}/**", crate::key::ROOT);
        let id = |what: &str| format!("{room}-{user}-{what}");
        rules.push(rule(
            id("publishes"),
            "ingress",
            &["put", "declare_queryable", "reply"],
            &[&own],
        ));
        // Subscribers of the room (the watchers' `mocap/<room>/**`) and
        // their probes (`mocap/<room>/*/_probe`) are declared to every
        // performer: what a performer sees of them is the same for all.
        rules.push(rule(
            id("is-told"),
            "egress",
            &["declare_subscriber", "query"],
            &[&own, &all, &probes],
        ));
        rules.push(rule(id("asks-paths"), "ingress", &["query"], &[&paths]));
        rules.push(rule(
            id("gets-paths"),
            "egress",
            &["reply", "declare_queryable"],
            &[&paths],
        ));
        subjects.push(json!({ "id": format!("{room}-{user}"), "usernames": [user] }));
        policies.push(json!({
            "rules": [id("publishes"), id("is-told"), id("asks-paths"), id("gets-paths")],
            "subjects": [format!("{room}-{user}")],
        }));
    }
    if !show.watchers.is_empty() {
        let id = |what: &str| format!("{room}-watchers-{what}");
        rules.push(rule(
            id("subscribe"),
            "ingress",
            &["declare_subscriber", "query"],
            &[&all],
        ));
        rules.push(rule(
            id("hand-out-paths"),
            "ingress",
            &["declare_queryable", "reply"],
            &[&paths],
        ));
        rules.push(rule(
            id("see"),
            "egress",
            &["put", "reply", "declare_queryable"],
            &[&all],
        ));
        rules.push(rule(id("are-asked"), "egress", &["query"], &[&paths]));
        subjects.push(json!({ "id": format!("{room}-watchers"), "usernames": show.watchers }));
        policies.push(json!({
            "rules": [id("subscribe"), id("hand-out-paths"), id("see"), id("are-asked")],
            "subjects": [format!("{room}-watchers")],
        }));
    }
    json!({
        "enabled": true,
        "default_permission": "deny",
        "rules": rules,
        "subjects": subjects,
        "policies": policies,
    })
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::indexing_slicing,
        reason = "test code: a panic is how a test reports"
    )]

    use super::*;

    #[test]
    fn each_performer_publishes_only_under_their_own_name() {
        let acl = rules(&Show {
            room: "show".into(),
            performers: vec!["alice".into(), "bob".into()],
            watchers: vec!["studio".into()],
        });
        assert_eq!(acl["default_permission"], "deny");
        let rules = acl["rules"].as_array().unwrap();
        let find = |id: &str| rules.iter().find(|r| r["id"] == id).unwrap();
        assert_eq!(
            find("show-alice-publishes")["key_exprs"],
            json!(["mocap/show/alice/**"])
        );
        assert_eq!(
            find("show-bob-publishes")["key_exprs"],
            json!(["mocap/show/bob/**"])
        );
        assert_eq!(find("show-alice-publishes")["flows"], json!(["ingress"]));
        // Nobody but the watchers may subscribe; nobody may put room-wide.
        for r in rules {
            let room_wide = r["key_exprs"] == json!(["mocap/show/**"]);
            let ingress = r["flows"] == json!(["ingress"]);
            if room_wide && ingress {
                assert_eq!(r["id"], "show-watchers-subscribe");
                assert!(!r["messages"].as_array().unwrap().contains(&json!("put")));
            }
        }
        let policies = acl["policies"].as_array().unwrap();
        assert_eq!(policies.len(), 3);
        assert_eq!(acl["subjects"][2]["usernames"], json!(["studio"]));
    }
}

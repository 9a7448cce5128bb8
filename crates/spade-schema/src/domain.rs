//! The domain's words, one enum each, written in tables as the strings the contracts name:
//! the setting of an environment, the arm of an episode, the status of a sandbox call, a memory
//! label and what set a designer reward.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Defines `as_str`, `Display`, `FromStr` and serde as the written names (plus any aliases read), so a table cell, a flag and a log line spell a value the same way.
macro_rules! words {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $s:literal $(| $alias:literal)*,)+ }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum $name { $($(#[$vm])* #[serde(rename = $s $(, alias = $alias)*)] $v,)+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$v,)+];

            /// The name written in tables.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$v => $s,)+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s.trim() {
                    $($s $(| $alias)* => Ok($name::$v),)+
                    other => Err(format!(
                        "unknown {} `{other}` ({})",
                        stringify!($name).to_lowercase(),
                        [$($s),+].join(", ")
                    )),
                }
            }
        }

    };
}

words! {
    /// What an environment trains: games (answers in `\boxed{}`) or tool use (function calls).
    #[derive(Default)]
    Setting {
        #[default]
        Games = "games",
        ToolUse = "tool-use" | "tool_use" | "tooluse" | "tools",
    }
}

impl Setting {
    /// A seed header's or table cell's setting, lenient: case-insensitive, and `games` for a
    /// missing or unknown value.
    pub fn parse(s: Option<&str>) -> Setting {
        s.and_then(|s| s.trim().to_ascii_lowercase().parse().ok()).unwrap_or_default()
    }
}

words! {
    /// The arm of an episode: played with the privileged hint or without.
    #[derive(Default)]
    Arm {
        #[default]
        Hint = "hint",
        NoHint = "nohint" | "no-hint",
    }
}

words! {
    /// The outcome class of one sandbox call (and of an episode: `ok` or the failing call's).
    #[derive(Default)]
    Status {
        #[default]
        Ok = "ok",
        Exception = "exception",
        Timeout = "timeout",
        Memory = "memory",
        Crashed = "crashed",
        OutputTooLarge = "output_too_large",
        InvalidResult = "invalid_result",
        InfraError = "infra_error",
    }
}

words! {
    /// A memory environment's label, recomputed every round from the plays in the window.
    #[derive(Default)]
    Label {
        Seed = "seed",
        TooEasy = "too-easy",
        TooHard = "too-hard",
        Leak = "leak",
        Failing = "failing",
        #[default]
        Unlabelled = "none",
    }
}

words! {
    /// What set a designer reward: the reward variant, or a penalty, or nothing to score.
    #[derive(Default)]
    RewardKind {
        #[default]
        Blend = "blend",
        SolveRate = "solve-rate",
        LearningPotential = "learning-potential",
        Invalid = "invalid",
        EnvFailure = "env-failure",
        HintLeak = "hint-leak",
        Unplayed = "unplayed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_errors() {
        for s in Setting::ALL {
            assert_eq!(s.as_str().parse::<Setting>().unwrap(), *s);
        }
        for k in RewardKind::ALL {
            assert_eq!(serde_json::from_value::<RewardKind>(serde_json::to_value(k).unwrap()).unwrap(), *k);
        }
        assert_eq!("no-hint".parse::<Arm>().unwrap(), Arm::NoHint);
        assert_eq!(Label::Unlabelled.to_string(), "none");
        let e = "sometimes".parse::<Arm>().unwrap_err();
        assert_eq!(e, "unknown arm `sometimes` (hint, nohint)");
        assert_eq!(Setting::parse(Some("Tool-Use")), Setting::ToolUse);
        assert_eq!(Setting::parse(Some("chess")), Setting::Games);
        assert_eq!(Setting::parse(None), Setting::Games);
    }
}

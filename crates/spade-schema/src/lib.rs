//! Arrow schemas of every spade table, defined once, each column documented.
//!
//! A table is a list of [`Column`]s: name, Arrow type, nullability and a one-line meaning.
//! Stages build their output schema from here and check their inputs against it; the README's
//! table reference is generated from the same lists ([`markdown`]), and a test keeps the two equal.
//!
//! Conventions (DESIGN, "Keys, rewards and the flow between rounds"):
//! - every row carries the ids that join it to its sources: `doc_id`, `candidate_id`, `env_id`
//!   (content hash of the code), `policy_version`;
//! - token arrays are `list<int32>`; log-prob arrays are `list<float32>` aligned one-to-one with their
//!   token array (value 0 where the loss mask is 0);
//! - `return` is the episode's reward sum clipped to [0, 1], `raw_return` the unclipped sum,
//!   `status` is `ok` or the failure of the environment.

#![forbid(unsafe_code)]

pub mod domain;
pub mod rows;
pub mod temps;

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, Field, FieldRef, Schema, SchemaRef};
use serde::Serialize;

pub use domain::{Arm, Label, RewardKind, Setting, Status};
pub use rows::{CandidateRow, DocRow, EnvRow, EvalRow, MemoryRow, RejectRow, RolloutRow, ScoreRow};

/// Version of the table contracts, written into every Parquet file's key-value metadata.
pub const SCHEMA_VERSION: &str = "1";

/// Key-value metadata keys written by spade.
pub mod meta {
    pub const SCHEMA_VERSION: &str = "spade.schema_version";
    pub const TABLE: &str = "spade.table";
    pub const SEED: &str = "spade.seed";
    pub const CONFIG: &str = "spade.config";
    pub const TOOL: &str = "spade.tool";
}

/// An error about one row of a list of rows a library was given: its index in that list, the
/// column at fault and why. The stage that read the rows names the file and row
/// (`spade_io::Origins::error`).
#[derive(Debug, Clone, PartialEq)]
pub struct RowError {
    pub index: usize,
    pub column: &'static str,
    pub msg: String,
}

impl RowError {
    pub fn new(index: usize, column: &'static str, msg: impl Into<String>) -> Self {
        RowError { index, column, msg: msg.into() }
    }
}

impl std::fmt::Display for RowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "row {}: column `{}`: {}", self.index + 1, self.column, self.msg)
    }
}

impl std::error::Error for RowError {}

/// One column of a table contract.
#[derive(Debug, Clone)]
pub struct Column {
    pub name: &'static str,
    pub ty: Ty,
    pub nullable: bool,
    pub doc: &'static str,
}

/// The Arrow types spade tables use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Str,
    I32,
    I64,
    F32,
    F64,
    Bool,
    /// `list<int32>`: token ids.
    Tokens,
    /// `list<float32>`: log-probs aligned with a token list.
    LogProbs,
    /// `list<uint8>`: a 0/1 loss mask aligned with a token list.
    Mask,
    /// `list<utf8>`.
    Strs,
}

impl Ty {
    pub fn data_type(self) -> DataType {
        let item = |t: DataType| DataType::List(Arc::new(Field::new("item", t, true)));
        match self {
            Ty::Str => DataType::Utf8,
            Ty::I32 => DataType::Int32,
            Ty::I64 => DataType::Int64,
            Ty::F32 => DataType::Float32,
            Ty::F64 => DataType::Float64,
            Ty::Bool => DataType::Boolean,
            Ty::Tokens => item(DataType::Int32),
            Ty::LogProbs => item(DataType::Float32),
            Ty::Mask => item(DataType::UInt8),
            Ty::Strs => item(DataType::Utf8),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Ty::Str => "string",
            Ty::I32 => "int32",
            Ty::I64 => "int64",
            Ty::F32 => "float32",
            Ty::F64 => "float64",
            Ty::Bool => "bool",
            Ty::Tokens => "list<int32>",
            Ty::LogProbs => "list<float32>",
            Ty::Mask => "list<uint8>",
            Ty::Strs => "list<string>",
        }
    }
}

impl Column {
    pub fn field(&self) -> Field {
        Field::new(self.name, self.ty.data_type(), self.nullable)
    }
}

const fn req(name: &'static str, ty: Ty, doc: &'static str) -> Column {
    Column { name, ty, nullable: false, doc }
}

const fn opt(name: &'static str, ty: Ty, doc: &'static str) -> Column {
    Column { name, ty, nullable: true, doc }
}

/// A named table contract.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    pub name: &'static str,
    pub doc: &'static str,
    pub columns: &'static [Column],
}

impl Table {
    pub fn schema(&self) -> SchemaRef {
        Arc::new(Schema::new(self.columns.iter().map(Column::field).collect::<Vec<_>>()))
    }

    pub fn column(&self, name: &str) -> Option<&'static Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// Rows as one batch with this table's schema: each field of `R` fills the column of its name
    /// (a typed row of `rows`, or any struct with the table's columns). A row that does not fit the
    /// contract (a missing column, a value of the wrong type) is a programming error, reported as
    /// one line naming the table.
    pub fn batch<R: Serialize>(&self, rows: &[R]) -> Result<RecordBatch, String> {
        let fields: Vec<FieldRef> = self.schema().fields().iter().cloned().collect();
        serde_arrow::to_record_batch(&fields, &rows).map_err(|e| format!("table `{}`: {e}", self.name))
    }

    /// The Arrow type of a column of this table; panics on a name that is not in the contract
    /// (a programming error, not an input error).
    pub fn ty(&self, name: &str) -> DataType {
        self.column(name).unwrap_or_else(|| panic!("column `{name}` is not in table `{}`", self.name)).ty.data_type()
    }
}

pub const DOCS: Table = Table {
    name: "docs",
    doc: "Documents sampled from the corpus by `spade-sample-corpus`; the designer grounds each environment on one.",
    columns: &[
        req("doc_id", Ty::Str, "the corpus row's `id`, as a string"),
        opt("domain", Ty::Str, "corpus domain (`math`, `science`, `code`, …), null when the corpus has none"),
        opt("source", Ty::Str, "where the document comes from (corpus name, shard)"),
        req("text", Ty::Str, "document text, cut to `--max-words` words"),
        req("words", Ty::I32, "words in `text` after the cut"),
        req("truncated", Ty::Bool, "whether `text` was cut"),
    ],
};

const ROUND: Column = req("round", Ty::I64, "self-play round that produced the row (`--round`)");
const POLICY_VERSION: Column = req("policy_version", Ty::I64, "checkpoint step of the weights that generated the row");
const TEMPERATURE: Column = req("temperature", Ty::F32, "sampling temperature; log-probs are of logits / T");

pub const CANDIDATES: Table = Table {
    name: "candidates",
    doc: "One row per designer sample from `spade-design`, valid or not; the designer's training batch.",
    columns: &[
        req(
            "candidate_id",
            Ty::Str,
            "id of the designer sample: hash of (run seed, round, doc, sample index); unique even when code is empty or duplicated",
        ),
        ROUND,
        opt("doc_id", Ty::Str, "document the sample is grounded on (null with `--no-corpus`)"),
        req("sample", Ty::I32, "sample index within its document (0..per-doc)"),
        req("skill", Ty::Str, "the skill the designer was asked for; designer GRPO groups use it"),
        req("setting", Ty::Str, "`games` or `tool-use`"),
        opt("code", Ty::Str, "environment code parsed from the first response; null when unparseable"),
        opt("final_code", Ty::Str, "code after repair turns (what validate runs); equals `code` without repair"),
        opt("hint", Ty::Str, "privileged hint for the agent's hint arm"),
        opt("skill_tags", Ty::Strs, "skill tags the model wrote (informational)"),
        opt("parse_error", Ty::Str, "why the response could not be parsed; null when it parsed"),
        opt("env_id", Ty::Str, "content hash of `final_code` (null when there is no code)"),
        req("attempts", Ty::I32, "design attempts made (1 + repair turns used)"),
        req("prompt_ids", Ty::Tokens, "designer prompt token ids, chat template applied"),
        req("response_ids", Ty::Tokens, "first response's token ids (the training sample)"),
        req("response_logprobs", Ty::LogProbs, "behaviour log-prob of each response token, aligned with `response_ids`"),
        req("response_text", Ty::Str, "first response decoded"),
        req("finish", Ty::Str, "why the first response ended: `eos`, `stop` or `length` (cut by `--max-new-tokens`)"),
        opt("repair_errors", Ty::Strs, "with `--repair`: the validation error shown at each repair turn, in order"),
        opt("hint_prompt_ids", Ty::Tokens, "with `--hint self`: the hint call's prompt tokens"),
        opt("hint_response_ids", Ty::Tokens, "with `--hint self`: the hint call's response tokens (not trained by default)"),
        opt("hint_response_logprobs", Ty::LogProbs, "with `--hint self`: behaviour log-probs aligned with `hint_response_ids`"),
        opt("hint_temperature", Ty::F32, "with `--hint self`: sampling temperature of the hint call (its log-probs are of logits / this)"),
        POLICY_VERSION,
        TEMPERATURE,
    ],
};

pub const ENVS: Table = Table {
    name: "envs",
    doc: "Environments that passed `spade-validate`: the pool the agent plays.",
    columns: &[
        opt("candidate_id", Ty::Str, "designer sample the environment came from (null for a folder pool)"),
        req("env_id", Ty::Str, "content hash of `code`"),
        req("code", Ty::Str, "the validated environment code"),
        opt("hint", Ty::Str, "privileged hint"),
        opt("skill", Ty::Str, "skill the environment trains"),
        opt("setting", Ty::Str, "`games` or `tool-use`"),
        opt("source", Ty::Str, "file name for a folder pool, else null"),
        opt("solver", Ty::Str, "the reference solver (`solve(observations)`), when the candidate brought one"),
    ],
};

pub const REJECTS: Table = Table {
    name: "rejects",
    doc: "Candidates that failed `spade-validate`, with the stage reached and the error.",
    columns: &[
        opt("candidate_id", Ty::Str, "designer sample (null for a folder pool)"),
        opt("env_id", Ty::Str, "content hash of the code, null when there was none"),
        opt("code", Ty::Str, "the code that was checked"),
        opt("hint", Ty::Str, "privileged hint"),
        opt("skill", Ty::Str, "skill"),
        opt("setting", Ty::Str, "`games` or `tool-use`"),
        req("stage", Ty::Str, "check that failed: parse, syntax, load, interface, probe, range, termination, determinism, trivial, hint-leak, solver (with --require-solver), undetermined (games; unless --allow-undetermined), duplicate"),
        req(
            "status",
            Ty::Str,
            "sandbox status of the failing call (ok, exception, timeout, memory, crashed, output_too_large, invalid_result, infra_error)",
        ),
        req("error", Ty::Str, "one-line reason"),
        req("validity", Ty::F64, "graded validity in [0, 1]: how far the candidate got"),
    ],
};

pub const ROLLOUTS: Table = Table {
    name: "rollouts",
    doc: "One row per episode from `spade-rollout`: the agent's training batch, kept as tokens end to end.",
    columns: &[
        req("env_id", Ty::Str, "environment played"),
        req("arm", Ty::Str, "`hint` or `nohint`"),
        req("episode", Ty::I32, "episode index within (env, arm)"),
        req("seed", Ty::I64, "episode seed, from (run seed, round, step, env_id, arm, episode)"),
        req("return", Ty::F64, "sum of rewards clipped to [0, 1]"),
        req("raw_return", Ty::F64, "sum of rewards, unclipped"),
        req("success", Ty::Bool, "`info[\"success\"]` when reported, else `return >= 0.5`"),
        req("turns", Ty::I32, "agent turns played"),
        req("status", Ty::Str, "`ok`, or the environment's failure (exception, timeout, …); non-ok episodes are not trained"),
        req("termination", Ty::Str, "terminated, truncated, max_turns, max_tokens, or env_error"),
        req("token_ids", Ty::Tokens, "the exact token sequence the model saw and produced"),
        req("loss_mask", Ty::Mask, "1 on the agent's own tokens, aligned with `token_ids`"),
        req("logprobs", Ty::LogProbs, "behaviour log-probs aligned with `token_ids` (0 where the mask is 0)"),
        req("transcript", Ty::Str, "chat transcript as JSON (readable copy; training uses the tokens)"),
        opt("skill", Ty::Str, "skill of the environment"),
        POLICY_VERSION,
        ROUND,
        req("step", Ty::I32, "agent step within the round (`--step`)"),
        TEMPERATURE,
    ],
};

pub const SCORES: Table = Table {
    name: "scores",
    doc: "One row per candidate (or per environment) from `spade-regret`: returns per arm, regret, raw designer reward.",
    columns: &[
        opt("candidate_id", Ty::Str, "designer sample (null when scoring environments without candidates)"),
        opt("env_id", Ty::Str, "environment, null for a candidate without code"),
        opt("doc_id", Ty::Str, "document of the candidate"),
        opt("skill", Ty::Str, "skill (designer group key)"),
        req("round", Ty::I64, "round of the scoring (`--round`)"),
        req("valid", Ty::Bool, "passed validation"),
        req("plays_hint", Ty::I64, "episodes with the hint used for the score (those in spade-regret's `--window`)"),
        req("plays_nohint", Ty::I64, "episodes without the hint used for the score (those in spade-regret's `--window`)"),
        req("failures", Ty::I64, "episodes that ended because the environment failed (infrastructure errors excepted)"),
        opt("validity", Ty::F64, "graded validity from `rejects` for an invalid candidate"),
        opt("hint_win_rate", Ty::F64, "mean `return` of the hint arm"),
        opt("nohint_win_rate", Ty::F64, "mean `return` of the no-hint arm"),
        opt("regret", Ty::F64, "hint win rate − no-hint win rate"),
        req("designer_reward", Ty::F64, "raw designer reward (blend, variant, or penalty); not normalised"),
        req("reward_kind", Ty::Str, "what set the reward: the variant (`blend`, `solve-rate`, `learning-potential`) or `invalid`, `env-failure`, `hint-leak`, `unplayed` (reward 0, not trained)"),
        opt("repairs", Ty::I32, "repair turns the candidate needed (`attempts` − 1); a positive reward is scaled by `--repair-discount` per turn"),
    ],
};

pub const MEMORY: Table = Table {
    name: "memory",
    doc: "The environment memory: every environment with its plays (lifetime and per round), scores and label; survives restarts.",
    columns: &[
        req("env_id", Ty::Str, "environment"),
        req("code", Ty::Str, "environment code"),
        opt("hint", Ty::Str, "privileged hint"),
        opt("skill", Ty::Str, "skill"),
        opt("setting", Ty::Str, "`games` or `tool-use`"),
        opt("candidate_id", Ty::Str, "designer sample it came from (null for seeds)"),
        req("first_round", Ty::I64, "round first seen"),
        req("last_round", Ty::I64, "round last played or added"),
        req("plays_hint", Ty::I64, "lifetime hint-arm episodes"),
        req("sum_hint", Ty::F64, "lifetime hint-arm returns"),
        req("plays_nohint", Ty::I64, "lifetime no-hint episodes"),
        req("sum_nohint", Ty::F64, "lifetime no-hint returns"),
        req("wins_hint", Ty::I64, "lifetime hint-arm successes"),
        req("wins_nohint", Ty::I64, "lifetime no-hint successes"),
        req("failures", Ty::I64, "lifetime episodes that failed through the environment's fault"),
        opt("regret", Ty::F64, "regret of the plays in the window (see `history`)"),
        opt("nohint_win_rate", Ty::F64, "no-hint win rate of the plays in the window"),
        opt("designer_reward", Ty::F64, "designer reward of the plays in the window"),
        req("label", Ty::Str, "`seed`, `too-easy`, `too-hard`, `leak`, `failing` or `none`, recomputed every round"),
        opt("lp_fast", Ty::F64, "learning-potential variant: the skill's fast EMA of win rate (same on every row of a skill)"),
        opt("lp_slow", Ty::F64, "learning-potential variant: the skill's slow EMA of win rate (same on every row of a skill)"),
        opt(
            "history",
            Ty::Str,
            "plays per round, JSON `[{\"round\": r, \"hint\": [plays, sum, wins], \"nohint\": [plays, sum, wins], \"failures\": n}, …]` ascending; scores and labels come from the rounds in spade-regret's `--window`",
        ),
        opt("solver", Ty::Str, "the environment's reference solver, when it has one (the designer's examples show it)"),
    ],
};

pub const EVAL: Table = Table {
    name: "eval",
    doc: "One row per held-out item and sample from `spade-eval`.",
    columns: &[
        req("suite", Ty::Str, "suite name (`rg:math`, `humaneval`, …)"),
        opt("family", Ty::Str, "family of the suite (math, algorithmic, cognition, logic, code, tool-use)"),
        req("task", Ty::Str, "task within the suite"),
        req("item_id", Ty::Str, "item id within the task"),
        req("sample", Ty::I32, "sample index (0..samples)"),
        req("prompt", Ty::Str, "prompt shown to the model"),
        req("response", Ty::Str, "model response"),
        opt("answer", Ty::Str, "reference answer where the suite has one"),
        req("score", Ty::F64, "score in [0, 1] from the suite's own verifier"),
        req("status", Ty::Str, "`ok`, or why scoring failed"),
        POLICY_VERSION,
    ],
};

/// Every table contract, in pipeline order.
pub const TABLES: &[Table] = &[DOCS, CANDIDATES, ENVS, REJECTS, ROLLOUTS, SCORES, MEMORY, EVAL];

/// Rows of a struct that is no table's contract (a stage's extra columns) as a batch, with the
/// schema traced from `R`: strings `utf8`, sequences `list`, an `Option` field nullable.
pub fn traced_batch<R: Serialize + serde::de::DeserializeOwned>(rows: &[R]) -> Result<RecordBatch, String> {
    use serde_arrow::schema::{SchemaLike, TracingOptions};
    let opts = TracingOptions::default().strings_as_large_utf8(false).allow_null_fields(true);
    let fields = Vec::<FieldRef>::from_type::<R>(opts).map_err(|e| e.to_string())?;
    serde_arrow::to_record_batch(&fields, &rows).map_err(|e| e.to_string())
}

/// Looks a table up by name.
pub fn table(name: &str) -> Option<Table> {
    TABLES.iter().copied().find(|t| t.name == name)
}

/// The table reference as Markdown, as it appears in the README.
pub fn markdown() -> String {
    let mut s = String::new();
    for t in TABLES {
        s.push_str(&format!("#### `{}`\n\n{}\n\n| column | type | null | meaning |\n| --- | --- | --- | --- |\n", t.name, t.doc));
        for c in t.columns {
            s.push_str(&format!("| `{}` | {} | {} | {} |\n", c.name, c.ty.name(), if c.nullable { "yes" } else { "no" }, c.doc.replace('|', "\\|")));
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_within_each_table() {
        for t in TABLES {
            let mut names: Vec<_> = t.columns.iter().map(|c| c.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), t.columns.len(), "duplicate column in {}", t.name);
        }
    }

    #[test]
    fn join_keys_are_present() {
        assert!(CANDIDATES.column("candidate_id").is_some());
        for t in [ENVS, REJECTS, SCORES] {
            assert!(t.column("candidate_id").is_some(), "{}", t.name);
            assert!(t.column("env_id").is_some(), "{}", t.name);
        }
        for t in [CANDIDATES, ROLLOUTS, EVAL] {
            assert!(t.column("policy_version").is_some(), "{}", t.name);
        }
    }

    #[test]
    fn logprob_columns_follow_a_token_column() {
        for t in TABLES {
            for c in t.columns.iter().filter(|c| c.ty == Ty::LogProbs) {
                assert!(t.columns.iter().any(|o| o.ty == Ty::Tokens), "{}.{}", t.name, c.name);
            }
        }
    }
}

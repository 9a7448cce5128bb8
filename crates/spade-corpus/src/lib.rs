//! Corpus sampling for `spade-sample-corpus`.
//!
//! One streaming pass over any number of shards. Each row gets a key, a seeded 64-bit hash of its
//! id; a sample of `n` is the `n` rows with the smallest keys (per domain for a `--mix`). This is
//! uniform sampling without replacement (bottom-k / reservoir sampling with random keys) in memory
//! bounded by the sample, and because the key depends only on the seed and the row's id, the sample
//! does not depend on how the corpus is split into shards or in which order they are read.
//!
//! Rounds draw fresh documents: round `r` of a run takes the keys ranked `(r-1)·n … r·n`, and once
//! the corpus (or a domain of the mix) is used up, a new pass in a new seeded order (see [`draw`]).
//! The sampler then keeps `r·n` rows, or the whole corpus when it is smaller.

#![forbid(unsafe_code)]

pub mod draw;

use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, RecordBatch, StringArray, UInt32Array};
use arrow::compute::{concat_batches, take_record_batch};
use arrow::datatypes::DataType;
use spade_schema::DocRow;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Short(String),
    #[error("{0}")]
    Arrow(#[from] arrow::error::ArrowError),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Names of the corpus columns (mappable by flags).
#[derive(Debug, Clone)]
pub struct ColumnNames {
    pub id: String,
    pub text: String,
    pub domain: String,
    pub source: String,
}

impl Default for ColumnNames {
    fn default() -> Self {
        ColumnNames { id: "id".into(), text: "text".into(), domain: "domain".into(), source: "source".into() }
    }
}

/// How many documents to draw.
#[derive(Debug, Clone, PartialEq)]
pub enum Quota {
    /// `n` documents from the whole corpus.
    Total(usize),
    /// So many documents per domain, in this order.
    Mix(Vec<(String, usize)>),
}

impl std::str::FromStr for Quota {
    type Err = String;
    /// Parses a mix: `math=10,science=5,code=15`.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut out: Vec<(String, usize)> = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (d, n) = part.split_once('=').ok_or_else(|| format!("`{part}`: expected DOMAIN=COUNT"))?;
            let n: usize = n.trim().parse().map_err(|_| format!("`{part}`: count is not a number"))?;
            let d = d.trim().to_string();
            if d.is_empty() {
                return Err(format!("`{part}`: empty domain name"));
            }
            if out.iter().any(|(e, _)| *e == d) {
                return Err(format!("domain `{d}` appears twice"));
            }
            out.push((d, n));
        }
        if out.is_empty() {
            return Err("empty mix".into());
        }
        Ok(Quota::Mix(out))
    }
}

#[derive(Debug, Clone)]
pub struct SampleConfig {
    pub seed: u64,
    /// Round of the run (0 and 1 draw alike); each round draws the next documents of the run.
    pub round: u64,
    pub quota: Quota,
    pub max_words: usize,
    /// Take all of a domain (or corpus) that has fewer documents than asked instead of failing.
    pub allow_short: bool,
    pub names: ColumnNames,
}

/// One batch of the corpus, with its id and (optional) domain columns as strings, and the file it
/// came from (a document's default `source`).
pub struct CorpusBatch<'a> {
    pub batch: &'a RecordBatch,
    pub ids: &'a StringArray,
    pub domains: Option<&'a StringArray>,
    pub origin: Arc<str>,
}

struct Entry {
    key: (u64, u64),
    id: String,
    row: RecordBatch,
    origin: Arc<str>,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key.cmp(&o.key)
    }
}

/// A bounded max-heap keeping the `cap` smallest keys.
struct Reservoir {
    /// Documents asked for per round.
    n: usize,
    cap: usize,
    seen: u64,
    heap: BinaryHeap<Entry>,
}

impl Reservoir {
    fn new(n: usize, round: u64) -> Self {
        let cap = draw::needed(n, round);
        Reservoir { n, cap, seen: 0, heap: BinaryHeap::with_capacity(cap.min(1 << 16) + 1) }
    }

    fn admits(&self, key: (u64, u64)) -> bool {
        self.cap > 0 && (self.heap.len() < self.cap || key < self.heap.peek().expect("non-empty").key)
    }

    fn insert(&mut self, e: Entry) {
        self.heap.push(e);
        if self.heap.len() > self.cap {
            self.heap.pop();
        }
    }
}

/// Streaming sampler: feed batches with [`Sampler::push`], then [`Sampler::finish`].
pub struct Sampler {
    cfg: SampleConfig,
    /// One reservoir per domain of the mix (or one for `Total`).
    pools: Vec<(Option<String>, Reservoir)>,
    index: HashMap<String, usize>,
    seq: u64,
    rows_read: u64,
}

impl Sampler {
    pub fn new(cfg: SampleConfig) -> Self {
        let pools: Vec<(Option<String>, Reservoir)> = match &cfg.quota {
            Quota::Total(n) => vec![(None, Reservoir::new(*n, cfg.round))],
            Quota::Mix(m) => m.iter().map(|(d, n)| (Some(d.clone()), Reservoir::new(*n, cfg.round))).collect(),
        };
        let index = pools.iter().enumerate().filter_map(|(i, (d, _))| d.clone().map(|d| (d, i))).collect();
        Sampler { cfg, pools, index, seq: 0, rows_read: 0 }
    }

    /// Rows read so far.
    pub fn rows_read(&self) -> u64 {
        self.rows_read
    }

    /// Feeds one batch of the corpus.
    pub fn push(&mut self, b: &CorpusBatch) -> Result<()> {
        let (ids, domains) = (b.ids, b.domains);
        let mut picked: Vec<(usize, usize, (u64, u64))> = Vec::new();
        for row in 0..b.batch.num_rows() {
            let seq = self.seq;
            self.seq += 1;
            let pool = match (&self.cfg.quota, domains) {
                (Quota::Total(_), _) => 0,
                (Quota::Mix(_), Some(d)) if d.is_valid(row) => match self.index.get(d.value(row)) {
                    Some(&i) => i,
                    None => continue,
                },
                (Quota::Mix(_), _) => continue,
            };
            let key = (draw::key(ids.value(row), self.cfg.seed, 0), seq);
            self.pools[pool].1.seen += 1;
            if self.pools[pool].1.admits(key) {
                picked.push((pool, row, key));
            }
        }
        self.rows_read += b.batch.num_rows() as u64;
        if picked.is_empty() {
            return Ok(());
        }
        // Copy the admitted rows out of the batch so the batch itself can be freed.
        let rows = UInt32Array::from(picked.iter().map(|p| p.1 as u32).collect::<Vec<_>>());
        let taken = take_record_batch(b.batch, &rows)?;
        for (i, (pool, _, key)) in picked.into_iter().enumerate() {
            let r = &mut self.pools[pool].1;
            if r.admits(key) {
                let id = ids.value(rows.value(i) as usize).to_string();
                r.insert(Entry { key, id, row: taken.slice(i, 1), origin: b.origin.clone() });
            }
        }
        Ok(())
    }

    /// The sample: its `docs` rows, and the corpus's other columns for those rows (to carry
    /// through).
    pub fn finish(self) -> Result<(Vec<DocRow>, RecordBatch)> {
        let names = self.cfg.names.clone();
        let mut chosen: Vec<Entry> = Vec::new();
        for (domain, r) in self.pools {
            let total = r.seen as usize;
            if total < r.n && !self.cfg.allow_short {
                let what = match &domain {
                    Some(d) => format!("domain `{d}` has {} documents, the mix asks for {}", r.seen, r.n),
                    None => format!("the corpus has {} documents, --n asks for {}", r.seen, r.n),
                };
                return Err(Error::Short(format!("{what} (pass --allow-short to take all {total})")));
            }
            let mut v = r.heap.into_vec();
            v.sort();
            // The kept rows are the corpus (a later pass is reached only when every row is kept), or
            // pass 0's first r·n: the run's draw over them takes round r's documents either way.
            let ids: Vec<&str> = v.iter().map(|e| e.id.as_str()).collect();
            let picks = draw::draw(&ids, self.cfg.seed, self.cfg.round, r.n);
            let mut slots: Vec<Option<Entry>> = v.into_iter().map(Some).collect();
            chosen.extend(picks.into_iter().filter_map(|i| slots[i].take()));
        }
        build_docs(chosen, &names, self.cfg.max_words)
    }
}

/// Cuts `text` after `max` whitespace-separated words, keeping the original spacing of what is
/// kept. Returns the text, its word count and whether it was cut.
pub fn truncate_words(text: &str, max: usize) -> (&str, usize, bool) {
    let mut words = 0usize;
    let mut in_word = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            in_word = false;
        } else if !in_word {
            in_word = true;
            if words == max {
                return (text[..i].trim_end(), words, true);
            }
            words += 1;
        }
    }
    (text, words, false)
}

fn build_docs(chosen: Vec<Entry>, names: &ColumnNames, max_words: usize) -> Result<(Vec<DocRow>, RecordBatch)> {
    let special = [&names.id, &names.text, &names.domain, &names.source];
    if chosen.is_empty() {
        return Ok((Vec::new(), RecordBatch::new_empty(Arc::new(arrow::datatypes::Schema::empty()))));
    }
    let schema = chosen[0].row.schema();
    let rows: Vec<RecordBatch> = chosen.iter().map(|e| e.row.clone()).collect();
    let all = concat_batches(&schema, &rows)?;
    let col = |name: &str| -> Option<ArrayRef> { all.column_by_name(name).map(|c| arrow::compute::cast(c, &DataType::Utf8).expect("string column")) };
    let ids = col(&names.id).expect("checked on read");
    let texts = col(&names.text).expect("checked on read");
    let ids = ids.as_any().downcast_ref::<StringArray>().expect("utf8");
    let texts = texts.as_any().downcast_ref::<StringArray>().expect("utf8");
    let domain: ArrayRef = col(&names.domain).unwrap_or_else(|| Arc::new(StringArray::new_null(all.num_rows())));
    let source: ArrayRef = match col(&names.source) {
        Some(s) => {
            let s = s.as_any().downcast_ref::<StringArray>().expect("utf8");
            Arc::new(StringArray::from_iter(
                (0..s.len()).map(|i| Some(if s.is_valid(i) { s.value(i).to_string() } else { shard_name(&chosen[i].origin) })),
            ))
        }
        None => Arc::new(StringArray::from_iter(chosen.iter().map(|e| Some(shard_name(&e.origin))))),
    };
    let domain = domain.as_any().downcast_ref::<StringArray>().expect("utf8");
    let source = source.as_any().downcast_ref::<StringArray>().expect("utf8");
    let docs: Vec<DocRow> = (0..all.num_rows())
        .map(|i| {
            let (text, words, truncated) = truncate_words(if texts.is_valid(i) { texts.value(i) } else { "" }, max_words);
            let opt = |a: &StringArray| a.is_valid(i).then(|| a.value(i).to_string());
            DocRow {
                doc_id: ids.value(i).to_string(),
                domain: opt(domain),
                source: opt(source),
                text: text.to_string(),
                words: words as i32,
                truncated,
            }
        })
        .collect();
    // The corpus's other columns (its id, text, domain and source columns are the docs' own).
    let keep: Vec<usize> = (0..schema.fields().len()).filter(|&k| !special.iter().any(|s| *s == schema.field(k).name())).collect();
    Ok((docs, all.project(&keep)?))
}

fn shard_name(origin: &str) -> String {
    std::path::Path::new(origin).file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| origin.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_spacing_and_counts_words() {
        assert_eq!(truncate_words("a  b\nc d", 3), ("a  b\nc", 3, true));
        assert_eq!(truncate_words("a b", 3), ("a b", 2, false));
        assert_eq!(truncate_words("  a b  ", 2), ("  a b  ", 2, false));
        assert_eq!(truncate_words("", 2), ("", 0, false));
        assert_eq!(truncate_words("héllo wörld x", 2), ("héllo wörld", 2, true));
    }

    #[test]
    fn mix_parses_and_rejects_bad_specs() {
        assert_eq!("math=10, science=5".parse::<Quota>().unwrap(), Quota::Mix(vec![("math".into(), 10), ("science".into(), 5)]));
        assert!("math".parse::<Quota>().is_err());
        assert!("math=x".parse::<Quota>().is_err());
        assert!("math=1,math=2".parse::<Quota>().is_err());
    }
}

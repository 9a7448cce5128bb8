//! The engine's memory of keys and values: one sequence's buffers ([`SeqKv`]), the store of
//! finished sequences' prefixes kept across calls ([`KvStore`]), and the engine's counters. A leaf
//! of the crate: the model holds a store, the engine ([`crate::engine`]) fills and reads it.

use std::borrow::Cow;

use half::{f16, slice::HalfFloatSliceExt};
use serde::Serialize;

use crate::kernels::attend::Elem;
use crate::repr::Repr;

/// Counters of the engine, summed over the model's calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct EngineStats {
    /// Sequences generated.
    pub sequences: usize,
    /// Prompt tokens of those sequences.
    pub prompt_tokens: usize,
    /// Prompt tokens whose keys and values were copied instead of computed.
    pub reused_tokens: usize,
    /// Positions run through the model (prefill and decode).
    pub computed_tokens: usize,
    /// Tokens sampled.
    pub generated_tokens: usize,
    /// Forward steps.
    pub steps: usize,
    /// Times a prompt waited for KV memory.
    pub kv_waits: usize,
}

impl std::fmt::Display for EngineStats {
    /// One line for a stage's log: sequences, prompt tokens reused, positions computed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pct = 100.0 * self.reused_tokens as f64 / self.prompt_tokens.max(1) as f64;
        write!(
            f,
            "engine: {} sequences, {} of {} prompt tokens reused ({pct:.0}%), {} positions computed in {} steps, {} tokens generated",
            self.sequences, self.reused_tokens, self.prompt_tokens, self.computed_tokens, self.steps, self.generated_tokens
        )?;
        if self.kv_waits > 0 {
            write!(f, ", {} waits for KV memory", self.kv_waits)?;
        }
        Ok(())
    }
}

/// One KV head's cached positions (`hd` values each): f32, or f16 where generation runs quantised
/// weights ([`Repr::kv_half`]): half the bytes decode attention reads per position, which is what a
/// long context or many rows wait for. Conversions round to nearest even; reading back is exact.
#[derive(Clone)]
pub(crate) enum Buf {
    F32(Vec<f32>),
    F16(Vec<f16>),
}

impl Buf {
    fn with_capacity(half: bool, capacity: usize) -> Buf {
        if half {
            Buf::F16(Vec::with_capacity(capacity))
        } else {
            Buf::F32(Vec::with_capacity(capacity))
        }
    }

    /// Append values (rounded to f16 in a half buffer).
    pub(crate) fn push(&mut self, x: &[f32]) {
        match self {
            Buf::F32(b) => b.extend_from_slice(x),
            Buf::F16(b) => {
                let n = b.len();
                b.resize(n + x.len(), f16::ZERO);
                b[n..].convert_from_f32_slice(x);
            }
        }
    }

    /// The first `n` values as f32: borrowed from an f32 buffer, converted from an f16 one.
    pub(crate) fn f32s(&self, n: usize) -> Cow<'_, [f32]> {
        match self {
            Buf::F32(b) => Elem::widen(&b[..n]),
            Buf::F16(b) => Elem::widen(&b[..n]),
        }
    }

    /// The first `n` values, in a buffer with room for `capacity`.
    fn prefix(&self, n: usize, capacity: usize) -> Buf {
        fn cut<T: Copy>(b: &[T], n: usize, capacity: usize) -> Vec<T> {
            let mut o = Vec::with_capacity(capacity.max(n));
            o.extend_from_slice(&b[..n]);
            o
        }
        match self {
            Buf::F32(b) => Buf::F32(cut(b, n, capacity)),
            Buf::F16(b) => Buf::F16(cut(b, n, capacity)),
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Buf::F32(b) => 4 * b.len(),
            Buf::F16(b) => 2 * b.len(),
        }
    }

    fn shrink(&mut self) {
        match self {
            Buf::F32(b) => b.shrink_to_fit(),
            Buf::F16(b) => b.shrink_to_fit(),
        }
    }
}

/// One sequence's keys and values: per layer and KV head (`layer · kv_heads + head`), `(len,
/// head_dim)` row-major, so attention for one head streams consecutive memory.
#[derive(Clone, Default)]
pub(crate) struct SeqKv {
    pub(crate) k: Vec<Buf>,
    pub(crate) v: Vec<Buf>,
    pub(crate) len: usize,
    /// `(id, n)`: the first `n` positions are bit for bit those of every other sequence with this
    /// id (copied from one another), so attention may read them once for all of them.
    pub(crate) tag: Option<(u64, usize)>,
}

impl SeqKv {
    /// Empty buffers for `heads` (layers × KV heads), with room for `capacity` values each, in f16
    /// when `half`.
    pub(crate) fn new(heads: usize, capacity: usize, half: bool) -> Self {
        SeqKv {
            k: (0..heads).map(|_| Buf::with_capacity(half, capacity)).collect(),
            v: (0..heads).map(|_| Buf::with_capacity(half, capacity)).collect(),
            len: 0,
            tag: None,
        }
    }

    /// [`SeqKv::prefix`], tagged as equal to this sequence's first `n` positions (this sequence
    /// takes a fresh tag from `next` unless its own already covers them).
    pub(crate) fn share(&mut self, n: usize, hd: usize, capacity: usize, next: &mut u64) -> SeqKv {
        let tag = match self.tag {
            Some((id, len)) if len >= n => (id, n),
            _ => {
                *next += 1;
                self.tag = Some((*next, n));
                (*next, n)
            }
        };
        SeqKv { tag: Some(tag), ..self.prefix(n, hd, capacity) }
    }

    /// The first `n` positions (`hd` values each per buffer), in buffers with room for
    /// `capacity` values each.
    pub(crate) fn prefix(&self, n: usize, hd: usize, capacity: usize) -> SeqKv {
        let cut = |b: &Buf| b.prefix(n * hd, capacity);
        SeqKv { k: self.k.iter().map(cut).collect(), v: self.v.iter().map(cut).collect(), len: n, tag: None }
    }

    fn bytes(&self) -> usize {
        self.k.iter().chain(&self.v).map(Buf::bytes).sum()
    }

    fn shrink(&mut self) {
        self.k.iter_mut().chain(self.v.iter_mut()).for_each(Buf::shrink);
    }
}

pub(crate) struct Stored {
    pub(crate) tokens: Vec<u32>,
    pub(crate) kv: SeqKv,
    pub(crate) used: u64,
}

/// Keys and values of finished sequences, found again by the longest common prefix with a new
/// prompt. Kept in the model across calls when [`crate::Model::set_prefix_cache`] is on.
#[derive(Default)]
pub struct KvStore {
    pub(crate) entries: Vec<Stored>,
    bytes: usize,
    pub(crate) clock: u64,
    /// The last tag handed out ([`SeqKv::share`]).
    pub(crate) tags: u64,
    /// The representation the entries were computed in.
    pub(crate) repr: Option<Repr>,
    pub(crate) stats: EngineStats,
}

pub(crate) fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl KvStore {
    /// The entry sharing the longest prefix with `prompt`, and that length.
    pub(crate) fn best(&self, prompt: &[u32]) -> Option<(usize, usize)> {
        self.entries.iter().enumerate().map(|(i, e)| (i, common_prefix(&e.tokens, prompt))).filter(|&(_, n)| n > 0).max_by_key(|&(i, n)| (n, i))
    }

    pub(crate) fn insert(&mut self, tokens: Vec<u32>, mut kv: SeqKv) {
        if kv.len == 0 {
            return;
        }
        // An entry the new one extends is of no further use.
        let before = self.entries.len();
        self.entries.retain(|e| !(e.tokens.len() <= tokens.len() && tokens.starts_with(&e.tokens)));
        if self.entries.len() != before {
            self.bytes = self.entries.iter().map(|e| e.kv.bytes()).sum();
        }
        kv.shrink();
        self.clock += 1;
        self.bytes += kv.bytes();
        self.entries.push(Stored { tokens, kv, used: self.clock });
    }

    /// Drop the least recently used entries until the store holds at most `bytes`.
    pub(crate) fn evict_to(&mut self, bytes: usize) {
        while self.bytes > bytes && !self.entries.is_empty() {
            let (i, _) = self.entries.iter().enumerate().min_by_key(|(_, e)| e.used).expect("non-empty");
            let e = self.entries.swap_remove(i);
            self.bytes -= e.kv.bytes();
        }
    }

    /// Forget every entry (the weights changed).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

pub(crate) fn accumulate(a: &mut EngineStats, b: &EngineStats) {
    a.sequences += b.sequences;
    a.prompt_tokens += b.prompt_tokens;
    a.reused_tokens += b.reused_tokens;
    a.computed_tokens += b.computed_tokens;
    a.generated_tokens += b.generated_tokens;
    a.steps += b.steps;
    a.kv_waits += b.kv_waits;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_finds_the_longest_prefix_and_evicts_the_oldest() {
        let kv = |n: usize| {
            let mut s = SeqKv::new(1, 0, false);
            s.k[0] = Buf::F32(vec![0.0; n]);
            s.v[0] = Buf::F32(vec![0.0; n]);
            s.len = n;
            s
        };
        let mut st = KvStore::default();
        st.insert(vec![1, 2, 3], kv(3));
        st.insert(vec![1, 2, 9, 9], kv(4));
        assert_eq!(st.best(&[1, 2, 3, 4]), Some((0, 3)));
        assert_eq!(st.best(&[1, 2, 9]), Some((1, 3)));
        assert_eq!(st.best(&[5]), None);
        // An extension replaces the entry it extends.
        st.insert(vec![1, 2, 3, 4, 5], kv(5));
        assert_eq!(st.len(), 2);
        assert_eq!(st.bytes(), 4 * 2 * (4 + 5));
        st.evict_to(4 * 2 * 5);
        assert_eq!(st.len(), 1);
        assert_eq!(st.best(&[1, 2, 3, 4, 5, 6]), Some((0, 5)));
    }
}

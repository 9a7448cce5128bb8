//! Seeded draws without replacement across the rounds of a run.
//!
//! A run's items (corpus documents, pool environments) are put in a seeded order, one pass after
//! another (each pass its own order); round `r` takes the next `n` positions of that sequence. So
//! the same (seed, round) always draws the same items, two rounds of a run draw different ones,
//! and an item is drawn again only once every item has been drawn in the current pass. The order
//! of an item depends only on the seed, the pass and its id, never on where it was read.

/// Sort key of `id` in pass `pass` of a draw seeded with `seed` (pass 0 is the plain seeded hash).
pub fn key(id: &str, seed: u64, pass: u64) -> u64 {
    let s = if pass == 0 { seed } else { seed ^ pass.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17) };
    xxhash_rust::xxh3::xxh3_64_with_seed(id.as_bytes(), s)
}

/// The first round of a run is 1; round 0 (a draw outside any run, e.g. the warm-up's) draws as round 1.
fn round_index(round: u64) -> u64 {
    round.max(1) - 1
}

/// How many items of one pass's order must be kept (the smallest keys) to serve `round`'s draw of
/// `n` when the whole set is larger than that.
pub fn needed(n: usize, round: u64) -> usize {
    n.saturating_mul(round_index(round) as usize + 1)
}

/// The positions that round `round`'s draw of `n` items (at most `total`) takes, as
/// `(pass, start, end)` ranges of that pass's order.
pub fn window(total: usize, n: usize, round: u64) -> Vec<(u64, usize, usize)> {
    let n = n.min(total);
    if n == 0 {
        return Vec::new();
    }
    let mut pos = (round_index(round) as u128) * n as u128;
    let mut left = n;
    let mut out = Vec::new();
    while left > 0 {
        let pass = (pos / total as u128) as u64;
        let off = (pos % total as u128) as usize;
        let take = left.min(total - off);
        out.push((pass, off, off + take));
        pos += take as u128;
        left -= take;
    }
    out
}

/// The order of pass `q` over `total` items drawn `n` a round: the pass's own seeded order
/// (`seeded(q)`, a permutation of `0..total`), except that the last items of pass `q - 1` go to its
/// end (in their old order): those the round straddling the boundary took (`t` of them) and those
/// of the round before, as many as leave the straddling round `n - t` others. So no round takes an
/// item twice, and two consecutive rounds share none whenever the set holds two rounds.
fn pass_order(total: usize, n: usize, q: u64, seeded: &mut impl FnMut(u64) -> Vec<usize>) -> Vec<usize> {
    let mut order = seeded(0);
    for p in 1..=q {
        let boundary = p as u128 * total as u128;
        let t = (boundary % n as u128) as usize;
        let moved = (n + t).min(total - (n - t));
        let tail: Vec<usize> = order[total - moved..].to_vec();
        let taken: std::collections::HashSet<usize> = tail.iter().copied().collect();
        let mut next = seeded(p);
        next.retain(|i| !taken.contains(i));
        next.extend(tail);
        order = next;
    }
    order
}

/// Round `round`'s draw of `n` of `total` items (all of them when there are fewer), given each
/// pass's seeded order (a permutation of `0..total`): indices, in draw order, never one twice.
fn pick(total: usize, n: usize, round: u64, mut seeded: impl FnMut(u64) -> Vec<usize>) -> Vec<usize> {
    let n = n.min(total);
    let mut out = Vec::with_capacity(n);
    for (pass, start, end) in window(total, n, round) {
        out.extend_from_slice(&pass_order(total, n, pass, &mut seeded)[start..end]);
    }
    out
}

/// Round `round`'s draw of `n` of `ids` (all of them when there are fewer): indices into `ids`,
/// in draw order.
pub fn draw(ids: &[&str], seed: u64, round: u64, n: usize) -> Vec<usize> {
    pick(ids.len(), n, round, |pass| {
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| (key(ids[i], seed, pass), i));
        order
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn windows_walk_the_passes() {
        assert_eq!(window(10, 3, 0), vec![(0, 0, 3)]);
        assert_eq!(window(10, 3, 1), vec![(0, 0, 3)]);
        assert_eq!(window(10, 3, 2), vec![(0, 3, 6)]);
        assert_eq!(window(10, 3, 4), vec![(0, 9, 10), (1, 0, 2)]);
        assert_eq!(window(10, 3, 5), vec![(1, 2, 5)]);
        assert_eq!(window(4, 9, 3), vec![(2, 0, 4)]);
        assert!(window(0, 3, 1).is_empty());
        assert_eq!(needed(3, 4), 12);
    }

    #[test]
    fn rounds_draw_without_replacement_until_a_pass_is_used_up() {
        let names: Vec<String> = (0..23).map(|i| format!("doc-{i}")).collect();
        let ids: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut seen = HashSet::new();
        for r in 1..=5 {
            let d = draw(&ids, 7, r, 4);
            assert_eq!(d.len(), 4);
            for i in d {
                assert!(seen.insert(i), "round {r} drew {i} again in the first pass");
            }
        }
        assert_eq!(draw(&ids, 7, 3, 4), draw(&ids, 7, 3, 4));
        assert_ne!(draw(&ids, 7, 3, 4), draw(&ids, 8, 3, 4));
        // Round 6 finishes the first pass (3 left) and starts the second.
        let d = draw(&ids, 7, 6, 4);
        assert_eq!(d.iter().filter(|i| !seen.contains(i)).count(), 3);
        // No round takes an item twice, however the passes fall.
        for r in 1..40 {
            let d = draw(&ids[..5], 3, r, 3);
            assert_eq!(d.iter().collect::<HashSet<_>>().len(), 3, "round {r}: {d:?}");
        }
        // Across pass boundaries too, two consecutive rounds never share an item (when the set
        // holds two rounds), and every pass draws every item once.
        for (total, n) in [(10, 4), (23, 4), (7, 3), (9, 2)] {
            let few = &ids[..total];
            let rounds: Vec<Vec<usize>> = (1..=30).map(|r| draw(few, 11, r, n)).collect();
            for w in rounds.windows(2) {
                assert!(w[0].iter().all(|i| !w[1].contains(i)), "{total}/{n}: {:?} then {:?}", w[0], w[1]);
            }
            let all: Vec<usize> = rounds.concat();
            for pass in all.chunks(total).filter(|c| c.len() == total) {
                assert_eq!(pass.iter().collect::<HashSet<_>>().len(), total, "{total}/{n}: a pass repeats: {pass:?}");
            }
        }
        // Where an item is read does not matter.
        let mut rev = ids.clone();
        rev.reverse();
        let a: Vec<&str> = draw(&ids, 7, 2, 4).into_iter().map(|i| ids[i]).collect();
        let b: Vec<&str> = draw(&rev, 7, 2, 4).into_iter().map(|i| rev[i]).collect();
        assert_eq!(a, b);
    }
}

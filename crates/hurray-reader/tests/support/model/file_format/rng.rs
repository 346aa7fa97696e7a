//! A small deterministic generator: each tensor and KV entry of a model
//! file is drawn from its own seed.

use super::super::basics::next;

pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn u64(&mut self) -> u64 {
        next(&mut self.0)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.u64() % n
        }
    }
    pub(crate) fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
    pub(crate) fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize].clone()
    }
    pub(crate) fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.u64() as u8).collect()
    }
    /// 1-`max` characters: ASCII, two-, three- and four-byte UTF-8, a
    /// combining mark (no normalisation: `é` and `e` + U+0301 differ).
    pub(crate) fn text(&mut self, min: usize, max: usize) -> String {
        const CHARS: [&str; 14] = [
            "a", "Z", "0", ".", "_", "/", " ", "é", "ß", "中", "𝄞", "e\u{301}", "\u{7f}", "Ω",
        ];
        let n = min + self.below((max - min + 1) as u64) as usize;
        (0..n).map(|_| self.pick(&CHARS)).collect()
    }
}

pub(crate) fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

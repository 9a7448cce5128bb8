//! The trainable forward against candle's own quantized Llama (inference-only) on the default
//! model: run in f32 with dequantized weights it must agree within 1e-3 with the same argmax;
//! the difference to the Q4_1 forward (what the GGUF ships) is reported.
//! A separate test binary: `CANDLE_DEQUANTIZE_ALL` is read per thread by candle.

mod common;

use candle_core::quantized::gguf_file;
use candle_core::{Device, Tensor, D};
use candle_transformers::models::quantized_llama::ModelWeights;
use spade_model::{load, Message};

/// Logits at every position from candle's quantized Llama, one token at a time.
fn reference_logits(path: &std::path::Path, ids: &[u32], dequantize: bool) -> Tensor {
    let path = path.to_path_buf();
    let ids = ids.to_vec();
    std::env::set_var("CANDLE_DEQUANTIZE_ALL", if dequantize { "1" } else { "0" });
    // A fresh thread reads the variable afresh.
    std::thread::spawn(move || {
        let mut f = std::fs::File::open(&path).unwrap();
        let content = gguf_file::Content::read(&mut f).unwrap();
        let mut m = ModelWeights::from_gguf(content, &mut f, &Device::Cpu).unwrap();
        let mut rows = Vec::new();
        for (i, &t) in ids.iter().enumerate() {
            let x = Tensor::new(&[[t]], &Device::Cpu).unwrap();
            rows.push(m.forward(&x, i).unwrap().squeeze(0).unwrap());
        }
        Tensor::stack(&rows, 0).unwrap()
    })
    .join()
    .unwrap()
}

#[test]
fn forward_matches_candle_quantized_llama() {
    let Some(path) = common::default_model() else { return };
    let m = load(&path, &Device::Cpu).unwrap();
    let ids = m.encode_chat(&[Message::system("You are helpful."), Message::user("Count to five: 1, 2,")], true).unwrap();
    let ours = m.forward(&Tensor::new(ids.as_slice(), &Device::Cpu).unwrap().unsqueeze(0).unwrap(), None).unwrap().squeeze(0).unwrap();
    let stats = |r: &Tensor| -> (f32, usize) {
        let d = (&ours - r).unwrap().abs().unwrap().flatten_all().unwrap().max(0).unwrap().to_scalar::<f32>().unwrap();
        let a = ours.argmax(D::Minus1).unwrap().to_vec1::<u32>().unwrap();
        let b = r.argmax(D::Minus1).unwrap().to_vec1::<u32>().unwrap();
        (d, a.iter().zip(&b).filter(|(x, y)| x != y).count())
    };
    let deq = reference_logits(&path, &ids, true);
    let (d, mism) = stats(&deq);
    eprintln!("{} positions: max |Δlogit| vs dequantized f32 reference {d:.3e}, argmax mismatches {mism}", ids.len());
    let q41 = reference_logits(&path, &ids, false);
    let (dq, mq) = stats(&q41);
    eprintln!("max |Δlogit| vs the Q4_1 forward {dq:.3e}, argmax mismatches {mq}");
    assert!(d <= 1e-3, "max |Δlogit| {d}");
    assert_eq!(mism, 0);
}

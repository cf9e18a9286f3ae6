// A WASM tool in Rust with no dependencies: the ABI needs only stdin,
// stdout and an exit code. Built by TestOtherLanguages when the machine
// has the wasm32-wasip1 target:
//
//   rustc --edition 2021 -O --target wasm32-wasip1 -o rust.wasm main.rs
use std::io::Read;

fn main() {
    let mut req = String::new();
    std::io::stdin().read_to_string(&mut req).unwrap();
    let name = std::env::args().next().unwrap_or_default();
    println!("{{\"output\":\"hello from rust, tool {}, {} bytes of request\"}}", name, req.len());
}

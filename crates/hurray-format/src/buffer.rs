//! Buffer handle tags (`buffer-protocol.md`).

/// Size of one buffer handle in bytes.
pub const HANDLE_LEN: u64 = 16;
/// The smallest declared alignment of a non-empty buffer (the SIMD minimum).
pub const MIN_ALIGNMENT: u32 = 64;
/// The alignment a writer targeting GPU or IPC transport must declare
/// (`buffer-protocol.md` § Alignment › Page Alignment for GPU and IPC).
pub const PAGE_ALIGNMENT: u32 = 4096;
/// `device_tag` of CPU host memory.
pub const DEVICE_CPU: u8 = 0x00;
/// The devices of `device_tag` 0x00 to 0x08 (`buffer-protocol.md` § Device Tags).
pub const DEVICE_NAMES: [&str; 9] = [
    "CPU",
    "CUDA",
    "ROCm",
    "Metal",
    "Vulkan",
    "WebGPU",
    "Hexagon",
    "Level Zero",
    "OpenCL",
];
/// `sync_mode` `SYNC_PRODUCER_SYNCED`.
pub const SYNC_PRODUCER_SYNCED: u8 = 0x00;
/// `memory_class` `STANDARD`.
pub const MEMORY_STANDARD: u8 = 0x00;
/// `memory_class` `HOST_PINNED`.
pub const MEMORY_HOST_PINNED: u8 = 0x01;
/// `memory_class` `UNIFIED`.
pub const MEMORY_UNIFIED: u8 = 0x02;
/// `memory_class` `PEER`.
pub const MEMORY_PEER: u8 = 0x03;

//! The portable witness's readings on macOS: what the kernel gives an
//! unprivileged process about a process of the same user.
//!
//! - the threads of a process: `proc_pidinfo(PROC_PIDLISTTHREADIDS)`, the
//!   64-bit thread ids `pthread_threadid_np` (and so Python's
//!   `threading.get_native_id()`, and the fixtures' `X-Thread-Id`) gives;
//! - per thread, `proc_pidinfo(PROC_PIDTHREADID64INFO)`: `pth_user_time +
//!   pth_system_time` (ns) and `pth_run_state` (`TH_STATE_RUNNING` is on a
//!   CPU or waiting for one; waiting on a lock is `TH_STATE_WAITING`);
//! - the host's idle ticks per CPU: `host_processor_info(PROCESSOR_CPU_LOAD_INFO)`.
//!
//! Why not `PROC_PIDLISTTHREADS` and `PROC_PIDTHREADINFO`: those list and
//! take a thread's handle (its user-space TSD address), which no reply
//! carries, so a reply's thread id could not be matched to its counters.
//! The `...ID...` flavors return the same `proc_threadinfo`, keyed by the
//! id the replies carry.
//!
//! Bindings are libc's (`proc_pidinfo`, `proc_threadinfo`,
//! `host_processor_info`, `processor_cpu_load_info`, `TH_STATE_RUNNING`,
//! `CPU_STATE_IDLE`; checked against libc 0.2.191) and mach2's (the host
//! and task ports, the buffer's release: libc marks its own deprecated in
//! favour of mach2). The type-check for macOS is `cargo check --target
//! aarch64-apple-darwin -p runner`; the workflow's macOS job runs it for real.

use std::io;
use std::mem::{size_of, MaybeUninit};
use std::sync::OnceLock;

/// `sys/proc_info.h`: one thread's `proc_threadinfo`, by 64-bit thread id.
/// Public in the SDK header, but libc binds only `PROC_PIDTHREADINFO` (5).
const PROC_PIDTHREADID64INFO: libc::c_int = 15;
/// `sys/proc_info_private.h`: a process's 64-bit thread ids. Not in the
/// public SDK header, so not in libc; the only listing keyed like the
/// replies (see the module note). Should a macOS drop it, the listing is
/// empty and the self-check reads the witness as unavailable.
const PROC_PIDLISTTHREADIDS: libc::c_int = 28;
/// The most threads listed per process.
const THREADS_AT_MOST: usize = 1024;
/// Ticks per second of `cpu_ticks`: the kernel's `hz`, 100 on every macOS
/// (neither libc nor mach2 names it; `sysconf(_SC_CLK_TCK)` says the same).
const TICKS_PER_S: u64 = 100;

/// The host port, taken once: every `mach_host_self()` adds a reference to
/// the send right our task holds, so taking it per reading would leak.
fn host_port() -> mach2::port::mach_port_t {
    static HOST: OnceLock<mach2::port::mach_port_t> = OnceLock::new();
    // SAFETY: no arguments; returns a send right to the host port.
    *HOST.get_or_init(|| unsafe { mach2::mach_init::mach_host_self() })
}

/// One thread of a process.
pub struct Task {
    pub pid: i32,
    /// The thread id as the replies carry it (ids past `i32` are left out).
    pub tid: i32,
    id: u64,
}

impl Task {
    fn info(&self) -> Option<libc::proc_threadinfo> {
        let mut info = MaybeUninit::<libc::proc_threadinfo>::zeroed();
        let size = size_of::<libc::proc_threadinfo>() as libc::c_int;
        // SAFETY: the buffer is a writable proc_threadinfo of `size` bytes.
        let n = unsafe {
            libc::proc_pidinfo(
                self.pid,
                PROC_PIDTHREADID64INFO,
                self.id,
                info.as_mut_ptr().cast(),
                size,
            )
        };
        // SAFETY: the kernel filled all `size` bytes (zeroed before anyway).
        (n == size).then(|| unsafe { info.assume_init() })
    }

    /// On-CPU ns: user plus system time.
    pub fn on_cpu_ns(&self) -> Option<u64> {
        self.info()
            .map(|i| i.pth_user_time.saturating_add(i.pth_system_time))
    }

    /// Runnable (`TH_STATE_RUNNING`: on a CPU or waiting for one), or not.
    pub fn runnable(&self) -> Option<bool> {
        self.info()
            .map(|i| i.pth_run_state == libc::TH_STATE_RUNNING)
    }
}

/// Every thread of `pids`.
pub fn open_tasks(pids: &[i32]) -> Vec<Task> {
    let mut out = Vec::new();
    let mut ids = vec![0u64; THREADS_AT_MOST];
    for &pid in pids {
        let bytes = (ids.len() * size_of::<u64>()) as libc::c_int;
        // SAFETY: `ids` is a writable buffer of `bytes` bytes.
        let n = unsafe {
            libc::proc_pidinfo(
                pid,
                PROC_PIDLISTTHREADIDS,
                0,
                ids.as_mut_ptr().cast(),
                bytes,
            )
        };
        let count = usize::try_from(n).unwrap_or(0) / size_of::<u64>();
        for &id in &ids[..count.min(ids.len())] {
            if let Ok(tid) = i32::try_from(id) {
                out.push(Task { pid, tid, id });
            }
        }
    }
    out
}

/// The host's idle time, every CPU summed, ns.
pub fn host_idle_ns() -> Option<u64> {
    let mut cpus: libc::natural_t = 0;
    let mut info: libc::processor_info_array_t = std::ptr::null_mut();
    let mut words: libc::mach_msg_type_number_t = 0;
    // SAFETY: out-pointers to locals; on success the kernel hands us an
    // array of `words` integers, released below.
    let kr = unsafe {
        libc::host_processor_info(
            host_port(),
            libc::PROCESSOR_CPU_LOAD_INFO,
            &mut cpus,
            &mut info,
            &mut words,
        )
    };
    if kr != libc::KERN_SUCCESS || info.is_null() {
        return None;
    }
    // SAFETY: PROCESSOR_CPU_LOAD_INFO fills one processor_cpu_load_info per CPU.
    let loads = unsafe {
        std::slice::from_raw_parts(info.cast::<libc::processor_cpu_load_info>(), cpus as usize)
    };
    let ticks: u64 = loads
        .iter()
        .map(|l| u64::from(l.cpu_ticks[libc::CPU_STATE_IDLE as usize]))
        .sum();
    // SAFETY: the array the kernel allocated in our task, released once.
    unsafe {
        mach2::vm::mach_vm_deallocate(
            mach2::traps::mach_task_self(),
            info as u64,
            u64::from(words) * size_of::<libc::integer_t>() as u64,
        );
    }
    Some(ticks.saturating_mul(1_000_000_000 / TICKS_PER_S))
}

/// The processes of a process group.
pub fn group_members(pgrp: i32) -> io::Result<Vec<i32>> {
    let mut pids = vec![0 as libc::pid_t; 4096];
    let bytes = (pids.len() * size_of::<libc::pid_t>()) as libc::c_int;
    // SAFETY: `pids` is a writable buffer of `bytes` bytes.
    let n = unsafe { libc::proc_listpgrppids(pgrp, pids.as_mut_ptr().cast(), bytes) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    // libproc's wrapper returns a count of pids (proc_pidinfo, bytes).
    let count = (n as usize).min(pids.len());
    let mut out: Vec<i32> = pids[..count].iter().copied().filter(|&p| p > 0).collect();
    out.sort_unstable();
    Ok(out)
}

/// The calling thread's 64-bit id, where it fits the replies' `i32`.
pub fn current_tid() -> Option<i32> {
    let mut id = 0u64;
    // SAFETY: a null thread means the calling thread; `id` is writable.
    let rc = unsafe { libc::pthread_threadid_np(0, &mut id) };
    (rc == 0).then(|| i32::try_from(id).ok()).flatten()
}

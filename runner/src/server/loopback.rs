//! Loopback only: the address servers are told to bind (`{host}`), the
//! `--host` check that keeps it on this machine, and the check that a
//! started server listens nowhere else.
//!
//! Servers under test run code from a checkout and answer anything that
//! reaches them, so they must never listen beyond the machine. The runner
//! passes `127.0.0.1` as `{host}` unless `--host` names another loopback
//! address (127.0.0.0/8 or ::1: some CI hosts have no IPv4 loopback, and
//! two runners on one host can keep to separate addresses). A profile can
//! still ignore `{host}` (a hard-coded `0.0.0.0`, or a server whose default
//! is every interface), so after a server is ready [`stray_listeners`] reads
//! what its process group actually listens on, and anything that is not
//! loopback stops the gate.
//!
//! The bind address is one per process, set once by `main` from `--host`
//! before any server starts; every command that starts servers gets it
//! without threading it through each call.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::OnceLock;

static BIND_HOST: OnceLock<IpAddr> = OnceLock::new();

/// The address servers bind: `--host`, else 127.0.0.1.
pub fn bind_host() -> IpAddr {
    *BIND_HOST.get_or_init(|| IpAddr::V4(Ipv4Addr::LOCALHOST))
}

/// Sets the bind address for this process; only before the first server
/// starts (later calls are refused, so one run never mixes addresses).
pub fn set_bind_host(host: IpAddr) -> Result<(), String> {
    if !host.is_loopback() {
        return Err(format!("{host} is not a loopback address"));
    }
    BIND_HOST
        .set(host)
        .map_err(|_| "the bind address is already set".to_string())?;
    Ok(())
}

/// Checks a `--host` value: an IP literal on loopback (127.0.0.0/8 or ::1).
pub fn parse_host(value: &str) -> Result<IpAddr, String> {
    let trimmed = value.trim_start_matches('[').trim_end_matches(']');
    let ip: IpAddr = trimmed.parse().map_err(|_| {
        format!(
            "--host {value}: give a loopback IP address (127.0.0.0/8 or ::1), not a name; \
             servers under test never listen beyond this machine"
        )
    })?;
    if !ip.is_loopback() {
        return Err(format!(
            "--host {value}: not a loopback address; only 127.0.0.0/8 or ::1 are allowed, \
             because servers under test must never listen beyond this machine"
        ));
    }
    Ok(ip)
}

/// Listening TCP sockets of process group `pgid` that are not on loopback.
/// Empty where the kernel cannot be asked (no /proc): the check is Linux's.
pub fn stray_listeners(pgid: i32) -> Vec<SocketAddr> {
    #[cfg(target_os = "linux")]
    {
        linux::stray_listeners(pgid)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pgid;
        Vec::new()
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashSet;
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

    pub fn stray_listeners(pgid: i32) -> Vec<SocketAddr> {
        let Some(members) = crate::host::process::live_group_members(pgid) else {
            return Vec::new();
        };
        let mut inodes = HashSet::new();
        for pid in members {
            let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
                continue;
            };
            for fd in fds.flatten() {
                if let Ok(target) = std::fs::read_link(fd.path()) {
                    let t = target.to_string_lossy();
                    if let Some(inode) = t
                        .strip_prefix("socket:[")
                        .and_then(|r| r.strip_suffix(']'))
                        .and_then(|n| n.parse::<u64>().ok())
                    {
                        inodes.insert(inode);
                    }
                }
            }
        }
        let mut out = Vec::new();
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let Ok(text) = std::fs::read_to_string(table) else {
                continue;
            };
            for (addr, inode) in listeners(&text) {
                if inodes.contains(&inode)
                    && !addr.ip().is_loopback()
                    && !mapped_loopback(addr.ip())
                {
                    out.push(addr);
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn mapped_loopback(ip: IpAddr) -> bool {
        match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
            IpAddr::V4(_) => false,
        }
    }

    /// (local address, inode) of each LISTEN row of /proc/net/tcp{,6}.
    pub fn listeners(table: &str) -> Vec<(SocketAddr, u64)> {
        let mut out = Vec::new();
        for line in table.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // sl local rem st tx:rx tr:when retrnsmt uid timeout inode
            if f.len() < 10 || f[3] != "0A" {
                continue;
            }
            let (Some(addr), Ok(inode)) = (parse_addr(f[1]), f[9].parse::<u64>()) else {
                continue;
            };
            out.push((addr, inode));
        }
        out
    }

    /// `0100007F:1F90` (IPv4) or 32 hex digits and a port (IPv6); each
    /// 32-bit word of the address is in the kernel's (host) byte order.
    fn parse_addr(field: &str) -> Option<SocketAddr> {
        let (ip, port) = field.split_once(':')?;
        let port = u16::from_str_radix(port, 16).ok()?;
        let words: Option<Vec<u32>> = (0..ip.len() / 8)
            .map(|i| u32::from_str_radix(&ip[i * 8..i * 8 + 8], 16).ok())
            .collect();
        let words = words?;
        let ip = match words.as_slice() {
            [w] => IpAddr::V4(Ipv4Addr::from(w.to_ne_bytes())),
            [a, b, c, d] => {
                let mut bytes = [0u8; 16];
                for (i, w) in [a, b, c, d].iter().enumerate() {
                    bytes[i * 4..i * 4 + 4].copy_from_slice(&w.to_ne_bytes());
                }
                IpAddr::V6(Ipv6Addr::from(bytes))
            }
            _ => return None,
        };
        Some(SocketAddr::new(ip, port))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn reads_listen_rows_of_both_tables() {
            // Little-endian host (x86_64, aarch64): 127.0.0.1 is 0100007F.
            if cfg!(target_endian = "big") {
                return;
            }
            let v4 = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
                0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0 100 0 0 10 0\n\
                1: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1 0 100 0 0 10 0\n\
                2: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 333 1 0 100 0 0 10 0\n";
            let rows = listeners(v4);
            assert_eq!(
                rows,
                vec![
                    ("127.0.0.1:8080".parse().unwrap(), 111),
                    ("0.0.0.0:80".parse().unwrap(), 222)
                ]
            );
            let v6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
                0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 444 1 0 100 0 0 10 0\n";
            assert_eq!(listeners(v6), vec![("[::1]:8080".parse().unwrap(), 444)]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_accepts_loopback_only_and_names_the_flag() {
        for ok in ["127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "[::1]"] {
            assert!(parse_host(ok).unwrap().is_loopback(), "{ok}");
        }
        for bad in [
            "0.0.0.0",
            "::",
            "10.0.0.1",
            "192.168.1.1",
            "localhost",
            "example.com",
            "",
        ] {
            let e = parse_host(bad).unwrap_err();
            assert!(e.starts_with(&format!("--host {bad}:")), "{e}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_listener_on_every_interface_is_seen_and_loopback_is_not() {
        use crate::host::process::GroupGuard;
        use std::process::Command;
        use std::time::{Duration, Instant};
        // A real process in its own group, listening first on 127.0.0.1
        // and then on 0.0.0.0 (no traffic is sent to it).
        let listen = |host: &str| {
            let mut cmd = Command::new("python3");
            cmd.args([
                "-c",
                "import socket, sys, time\n\
                 s = socket.socket(); s.bind((sys.argv[1], 0)); s.listen(1)\n\
                 print(s.getsockname()[1], flush=True); time.sleep(30)",
                host,
            ])
            .stdout(std::process::Stdio::piped());
            let mut g = GroupGuard::spawn(&mut cmd, Duration::from_millis(500)).unwrap();
            let mut line = String::new();
            let out = g.child_mut().stdout.take().unwrap();
            std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line).unwrap();
            let port: u16 = line.trim().parse().unwrap();
            (g, port)
        };
        let (loopback, _) = listen("127.0.0.1");
        assert_eq!(stray_listeners(loopback.pgid()), Vec::<SocketAddr>::new());
        drop(loopback);
        let (everywhere, port) = listen("0.0.0.0");
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut seen = stray_listeners(everywhere.pgid());
        while seen.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            seen = stray_listeners(everywhere.pgid());
        }
        assert_eq!(seen, vec![SocketAddr::from(([0, 0, 0, 0], port))]);
    }
}

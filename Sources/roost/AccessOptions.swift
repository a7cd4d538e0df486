import Foundation
import RoostCore
import RoostHTTP
import RoostServer

/// `roost serve` options that decide who may do what: which proxy header names the client,
/// registrations per address, who reads `/metrics`.
extension ServeOption {
    static let access: [ServeOption] = [
        ServeOption(
            flag: "--proxy-header", variable: "ROOST_PROXY_HEADER", valueName: "x-forwarded-for|forwarded",
            help:
                "the one header your trusted proxies write: X-Forwarded-For with X-Forwarded-Proto (nginx, Caddy, HAProxy's forwardfor; the default) or RFC 7239 Forwarded; the other is ignored"
        ) {
            guard let header = ForwardingHeader(rawValue: $1.lowercased()) else {
                throw UsageError(
                    message: "--proxy-header takes 'x-forwarded-for' or 'forwarded', not '\($1)'")
            }
            $0.trustedProxies.header = header
        },
        ServeOption(
            flag: "--max-registrations", variable: "ROOST_MAX_REGISTRATIONS",
            valueName: "N",
            help:
                "registrations a client address (an IPv6 /64 as one) may attempt per hour; 429 beyond (default 10; 0: no limit)"
        ) {
            $0.loginLimits.registrationsPerAddress = try integer(
                $1, flag: "--max-registrations", range: 0...1_000_000)
        },
        ServeOption(
            flag: "--admin-allow", variable: "ROOST_ADMIN_ALLOW", valueName: "CIDR,...",
            help:
                "client addresses that may reach the dashboard (/_/) and /ff/admin/..., e.g. 127.0.0.1,10.0.0.0/8; others get 403, and an admin token is an ordinary user's (default any: the admin right is checked anyway)"
        ) {
            do {
                $0.adminAllowed = try TrustedProxies($1)
            } catch let error as TrustedProxiesError {
                throw UsageError(
                    message: error.message.replacingOccurrences(
                        of: "--trusted-proxies", with: "--admin-allow"))
            }
        },
        ServeOption(
            flag: "--system-password-file", variable: "ROOST_SYSTEM_PASSWORD_FILE", valueName: "PATH",
            help:
                "a file holding FatFractal's system user's password (16 to 1024 bytes; a final newline is not part of it): HTTP Basic as 'system' with it is an administrator (default none: system never logs in)"
        ) {
            guard let data = FileManager.default.contents(atPath: $1),
                var password = String(data: data, encoding: .utf8)
            else {
                throw UsageError(message: "--system-password-file: cannot read '\($1)' as UTF-8 text")
            }
            while password.last == "\n" || password.last == "\r" { password.removeLast() }
            guard
                (SystemLogin.minimumPasswordBytes...SystemLogin.maximumPasswordBytes).contains(
                    password.utf8.count)
            else {
                throw UsageError(
                    message:
                        "--system-password-file: the password must be \(SystemLogin.minimumPasswordBytes) to \(SystemLogin.maximumPasswordBytes) bytes long"
                )
            }
            $0.systemPassword = password
        },
        ServeOption(
            flag: "--metrics-allow", variable: "ROOST_METRICS_ALLOW", valueName: "CIDR,...",
            help:
                "client addresses served /metrics without an administrator's token, e.g. 127.0.0.1,10.0.0.0/8 (default none: administrators only)"
        ) {
            do {
                $0.metricsAllowed = try TrustedProxies($1)
            } catch let error as TrustedProxiesError {
                throw UsageError(
                    message: error.message.replacingOccurrences(
                        of: "--trusted-proxies", with: "--metrics-allow"))
            }
        },
    ]
}

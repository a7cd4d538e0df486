import RoostHTTP
import RoostServer

/// `roost serve` options that decide who may do what: registrations per address, who reads
/// `/metrics`.
extension ServeOption {
    static let access: [ServeOption] = [
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

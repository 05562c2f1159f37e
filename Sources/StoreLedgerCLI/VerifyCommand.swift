import ArgumentParser
import Foundation
import StoreLedgerCore
import StoreLedgerServer
import StoreLedgerVerification

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `storeledger verify`: verifies one piece of App Store signed data offline and prints its decoded payload.
struct VerifyCommand: AsyncParsableCommand {
    /// Exit status for input that cannot be read.
    static let unreadableInputExitCode: Int32 = 1

    /// The command's name, help and exit codes.
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify App Store signed data (notification, transaction, renewal info) and print its payload.",
        discussion: """
            FILE holds a compact JWS (surrounding whitespace is ignored) or a JSON body such as \
            {"signedPayload": "..."}; use - to read standard input. The kind is detected from the payload. \
            The chain is validated offline at the payload's signedDate against the trusted roots: the --root \
            files if given, else APPLE_ROOT_CAS_DER_BASE64 (comma-separated base64 DER) if set, else the embedded \
            Apple Root CA - G3. Without --bundle-id / --environment the payload's own values are accepted (noted \
            on stderr); the signature and chain are always checked.

            On success the payload is printed to stdout as pretty JSON, nested signedTransactionInfo, \
            signedRenewalInfo and signedAppTransactionInfo decoded in place. On failure the error code and \
            detail go to stderr.

            Exit codes:
              0   verified
              1   FILE could not be read
              10  malformed: not an ES256 JWS with 3 x5c certificates
              11  bad signature
              12  untrusted chain (root, Apple OIDs, expiry, Xcode data)
              13  wrong app (bundle id / app Apple id)
              14  wrong environment
              15  retryable (online checks only)
              16  invalid configuration (--root, APPLE_ROOT_CAS_DER_BASE64)
              64  invalid command-line usage

            Example (Apple's test vectors):
              storeledger verify --root testCA.der --bundle-id com.example \\
                --environment Sandbox testNotification

            Throughput (bench/verify runs this pinned to one core):
              taskset -c 0 storeledger verify --benchmark 20000 --root testCA.der \\
                --bundle-id com.example --environment Sandbox testNotification
            Over many notifications, one body per line (bench/drain: the very notifications its worker drained):
              storeledger verify --benchmark 20000 --each-line --bundle-id com.example --environment Sandbox bodies.jsonl
            """
    )

    /// DER root certificates to trust instead of the default.
    @Option(
        name: .customLong("root"),
        help: ArgumentHelp("A DER root certificate to trust (repeatable).", valueName: "FILE.der")
    )
    var roots: [String] = []

    /// The expected bundle id.
    @Option(name: .customLong("bundle-id"), help: ArgumentHelp("The app's bundle id.", valueName: "ID"))
    var bundleID: String?

    /// The expected app Apple id.
    @Option(
        name: .customLong("app-apple-id"),
        help: ArgumentHelp("The app's Apple id (required for Production).", valueName: "N")
    )
    var appAppleID: Int64?

    /// The expected environment.
    @Option(help: ArgumentHelp("Sandbox or Production.", valueName: "ENV"))
    var environment: String?

    /// Accept unsigned Xcode / LocalTesting data.
    @Flag(name: .customLong("allow-xcode"), help: "Accept Xcode / LocalTesting data without chain or signature checks.")
    var allowXcode = false

    /// Measure instead of print: after the normal verification, build one long-lived verifier from the same
    /// configuration (as the worker does), verify the input once more to warm it up (this fills its chain cache),
    /// then verify it N more times sequentially on this one task and print `verifications/s` and the chain-cache
    /// statistics to stdout instead of the payload. The rate is per second of this process's CPU time (as
    /// `openssl speed` counts by default), so other load on a shared core does not lower it; the wall-clock rate is
    /// printed beside it. Each iteration does the worker's full work for the kind: for a
    /// notification `verifyNotification` (outer JWS plus every nested JWS: parse, chain-cache lookup, ES256
    /// signature, claims); for other kinds the matching `verify…` call. Pin it with `taskset -c 0` to measure one core.
    @Option(
        name: .customLong("benchmark"),
        help: ArgumentHelp("Verify the input N times after one warm-up and print verifications/s.", valueName: "N")
    )
    var benchmarkIterations: Int?

    /// With `--benchmark`: FILE holds one body or token per line and the benchmark verifies every line in turn.
    @Flag(
        name: .customLong("each-line"),
        help: ArgumentHelp(
            "With --benchmark: FILE holds one body or token per line (JSON Lines, as `simulate --output` writes); the first line is verified and reported, then the N verifications take the lines in turn (cycling)."
        )
    )
    var eachLine = false

    /// The input file, or `-` for stdin.
    @Argument(help: ArgumentHelp("The file holding the signed data, or - for standard input.", valueName: "FILE"))
    var file: String

    /// Rejects an unknown environment before anything runs.
    func validate() throws {
        if let environment, Self.parseEnvironment(environment) == nil {
            throw ValidationError("--environment must be Sandbox or Production, not '\(environment)'")
        }
        if appAppleID != nil, bundleID == nil {
            throw ValidationError("--app-apple-id needs --bundle-id")
        }
        if let benchmarkIterations, benchmarkIterations < 1 {
            throw ValidationError("--benchmark needs a positive number of iterations")
        }
        if eachLine, benchmarkIterations == nil {
            throw ValidationError("--each-line needs --benchmark")
        }
    }

    /// Reads, verifies, prints; exits with the code of the failure kind.
    func run() async throws {
        let inputs: [String]
        do {
            let data = try readInput()
            inputs = eachLine ? Self.nonBlankLines(of: data) : [String(decoding: data, as: UTF8.self)]
        } catch {
            Self.printError("cannot read \(file == "-" ? "standard input" : file): \(error.localizedDescription)")
            throw ExitCode(Self.unreadableInputExitCode)
        }
        guard let input = inputs.first else {
            Self.printError("\(file == "-" ? "standard input" : file) holds no line to verify")
            throw ExitCode(Self.unreadableInputExitCode)
        }
        let report: VerificationReport
        do {
            report = try await SignedDataInspector(options: inspectorOptions()).inspect(input)
        } catch {
            Self.printError("error: \(error.code): \(error.detail)")
            throw ExitCode(Self.exitCode(for: error.code))
        }
        for note in report.notes {
            Self.printError("note: \(note)")
        }
        let isLocalTestData = report.notification?.isLocalTestData ?? report.signedData?.isLocalTestData ?? false
        Self.printError(
            isLocalTestData
                ? "accepted \(report.kind.rawValue) as local test data (no chain or signature check)"
                : "verified \(report.kind.rawValue) (\(report.configuration.environment))"
        )
        if let benchmarkIterations {
            do {
                try await Self.benchmark(report: report, inputs: inputs, iterations: benchmarkIterations)
            } catch {
                Self.printError("error: \(error.code): \(error.detail)")
                throw ExitCode(Self.exitCode(for: error.code))
            }
            return
        }
        print(report.expandedPayloadText)
    }

    /// `--benchmark N`: one verifier with the report's configuration (the worker's default chain-cache size), one
    /// warm-up verification of the first input, then `iterations` sequential verifications on this task taking the
    /// inputs' tokens in turn (one input: the same token every time; `--each-line`: every line, cycling); prints the
    /// rate and the chain-cache statistics. Every iteration's result is checked, so a failure stops the run. The
    /// tokens are taken out of their bodies before the clock starts.
    static func benchmark(
        report: VerificationReport,
        inputs: [String],
        iterations: Int
    ) async throws(VerificationError) {
        var configuration = report.configuration
        configuration.chainCacheCapacity = VerifierConfiguration.defaultChainCacheCapacity
        let verifier = try SignedDataVerifier(configuration: configuration)
        var tokens: [String] = []
        tokens.reserveCapacity(inputs.count)
        for input in inputs { tokens.append(try SignedDataInspector.signedData(in: input)) }
        let kind = report.kind
        func verifyOnce(_ token: String) async throws(VerificationError) -> Int {
            switch kind {
            case .notification:
                let notification = try await verifier.verifyNotification(token)
                return notification.signedPayload.utf8.count
                    + (notification.transaction?.payloadJSON.count ?? 0)
                    + (notification.renewalInfo?.payloadJSON.count ?? 0)
                    + (notification.appTransaction?.payloadJSON.count ?? 0)
            case .transaction: return try await verifier.verifyTransaction(token).payloadJSON.count
            case .renewalInfo: return try await verifier.verifyRenewalInfo(token).payloadJSON.count
            case .appTransaction: return try await verifier.verifyAppTransaction(token).payloadJSON.count
            }
        }
        var checksum = try await verifyOnce(tokens[0])
        let clock = ContinuousClock()
        let start = clock.now
        let cpuStart = processCPUSeconds()
        for iteration in 0..<iterations {
            checksum &+= try await verifyOnce(tokens[iteration % tokens.count])
        }
        let cpuSeconds = processCPUSeconds() - cpuStart
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let statistics = verifier.chainCacheStatistics
        print("kind: \(kind.rawValue)")
        print("iterations: \(iterations) over \(tokens.count) distinct input(s) (after 1 warm-up; checksum \(checksum))")
        print("seconds: \(String(format: "%.6f", seconds)) wall, \(String(format: "%.6f", cpuSeconds)) CPU")
        print("verifications/s: \(String(format: "%.1f", Double(iterations) / cpuSeconds))")
        print("wall verifications/s: \(String(format: "%.1f", Double(iterations) / seconds))")
        print(
            "chain cache: hits \(statistics.hits), chain validations \(statistics.chainValidations), "
                + "entries \(statistics.entries)/\(statistics.capacity)"
        )
    }

    /// CPU time (user + system) this process has used, in seconds.
    static func processCPUSeconds() -> Double {
        Double(clock()) / Double(CLOCKS_PER_SEC)
    }

    /// The exit status for a verification failure kind (see the help text).
    static func exitCode(for code: VerificationError.Code) -> Int32 {
        switch code {
        case .malformed: 10
        case .badSignature: 11
        case .untrustedChain: 12
        case .wrongApp: 13
        case .wrongEnvironment: 14
        case .retryable: 15
        case .invalidConfiguration: 16
        default: 2
        }
    }

    /// `Sandbox` / `Production`, case-insensitively.
    static func parseEnvironment(_ value: String) -> AppStoreEnvironment? {
        AppStoreEnvironment(configurationValue: value).flatMap {
            $0 == .sandbox || $0 == .production ? $0 : nil
        }
    }

    private func inspectorOptions() throws(VerificationError) -> SignedDataInspector.Options {
        let trust: TrustConfiguration
        if roots.isEmpty {
            let value = Bootstrap.settings.string(TrustConfiguration.rootsConfigurationKey)
            trust = try TrustConfiguration.fromConfigurationValue(value)
        } else {
            var ders: [Data] = []
            for path in roots {
                guard let der = FileManager.default.contents(atPath: path) else {
                    throw VerificationError(.invalidConfiguration, "cannot read root certificate \(path)")
                }
                ders.append(der)
            }
            trust = try TrustConfiguration(rootCertificatesDER: ders)
        }
        return SignedDataInspector.Options(
            trust: trust,
            apps: bundleID.map { [AppIdentity(bundleID: $0, appAppleID: appAppleID)] },
            environment: environment.flatMap(Self.parseEnvironment),
            allowXcodeEnvironment: allowXcode
        )
    }

    private func readInput() throws -> Data {
        if file == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        return try Data(contentsOf: URL(fileURLWithPath: file))
    }

    /// The lines of `data` (ended by LF, CRLF or CR) that hold more than whitespace, split on bytes: the 20,000
    /// notification bodies bench/drain verifies (262 MB) split in half a second, where splitting the text on
    /// `Character`s took seconds before every measurement.
    static func nonBlankLines(of data: Data) -> [String] {
        data.withUnsafeBytes { bytes in
            var lines: [String] = []
            var start = 0
            for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: "\n") || bytes[index] == UInt8(ascii: "\r") {
                let line = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                start = index + 1
                if line.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) {
                    lines.append(String(decoding: line, as: UTF8.self))
                }
            }
            return lines
        }
    }

    private static func printError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

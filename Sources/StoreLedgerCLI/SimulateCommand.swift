import ArgumentParser
import Foundation
import StoreLedgerCore
import StoreLedgerServer
import StoreLedgerSimulation
import StoreLedgerVerification

/// `storeledger simulate`: plays App Store lifecycles, signs them with the local development CA and POSTs the
/// notifications to a running receiver, so the whole pipeline can be watched without Apple.
struct SimulateCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Send App Store-shaped signed notifications for simulated lifecycles to a local receiver.",
        discussion: """
            Notifications are signed like Apple's (ES256, 3-certificate x5c) by the development CA in --ca-dir, \
            which is minted on first use; `storeledger dev` trusts the same folder. Each lifecycle is dated so that \
            it ends now. Only loopback hosts are accepted unless --allow-remote is given.

            Lifecycles:
            \(SimulatedLifecycle.allCases.map { "  \($0.rawValue.padding(toLength: 22, withPad: " ", startingAt: 0))\($0.summary)" }.joined(separator: "\n"))

            Exit status: 0 when every POST got a 2xx answer, 1 when any failed, 64 for invalid usage.

            Examples:
              storeledger simulate --lifecycle renewals
              storeledger simulate --lifecycle renewals --period weekly --renewals 156
              storeledger simulate --lifecycle grace-recovery --subscriptions 5 --shuffle --duplicate-rate 0.2
              storeledger simulate --random --rate 20 --duration 30
              storeledger simulate --random --rate 1000 --duration 100 --output bodies.jsonl
              export APPLE_ROOT_CAS_DER_BASE64=$(storeledger simulate --print-root)
            """
    )

    /// The receiver URL.
    @Option(
        help: ArgumentHelp(
            "Where to POST (default http://127.0.0.1:$PORT/notifications/apple/sandbox, or …/apple for Production; PORT defaults to 8080).",
            valueName: "URL"))
    var url: String?

    /// One lifecycle by name.
    @Option(help: ArgumentHelp("The lifecycle to play (default renewals); see the list above.", valueName: "NAME"))
    var lifecycle: String?

    /// Random lifecycles instead of one.
    @Flag(help: "Play random lifecycles at --rate notifications per second for --duration seconds.")
    var random = false

    /// Notifications per second.
    @Option(help: ArgumentHelp("Notifications per second (default: as fast as answered; 10 with --random).", valueName: "N"))
    var rate: Double?

    /// How long a random run lasts.
    @Option(help: ArgumentHelp("Seconds a --random run lasts (default 10, at most 3600).", valueName: "S"))
    var duration: Double?

    /// How many subscriptions.
    @Option(
        help: ArgumentHelp(
            "Subscriptions to simulate (default 1; with --random, as many as rate × duration needs).", valueName: "K"))
    var subscriptions: Int?

    /// Renewals of the `renewals` lifecycle.
    @Option(
        help: ArgumentHelp(
            "Renewals the renewals lifecycle plays before auto-renew is turned off (default 3; a timeline spans at most 20 years): long histories.",
            valueName: "N"))
    var renewals = 3

    /// The subscription period.
    @Option(
        help: ArgumentHelp(
            "The subscription period: weekly, monthly (30 days, default), yearly (365 days), or ISO 8601 like P1W, P3M, P1Y.",
            valueName: "PERIOD"))
    var period = "monthly"

    /// Renew a CA that does not cover the run.
    @Flag(
        name: .customLong("renew-ca"),
        help:
            "When the development CA does not cover the dates this run signs, mint a new one in its place (restart a running ledger so it trusts it)."
    )
    var renewCA = false

    /// Out-of-order delivery.
    @Flag(help: "Deliver the notifications in a random order instead of signing order.")
    var shuffle = false

    /// Apple-style retries.
    @Option(
        name: .customLong("duplicate-rate"),
        help: ArgumentHelp(
            "Probability (0…1) that a notification is sent again later with the same notificationUUID, as Apple retries.",
            valueName: "P"))
    var duplicateRate = 0.0

    /// The development CA folder.
    @Option(
        name: .customLong("ca-dir"),
        help: ArgumentHelp(
            "The development CA folder (created on first use).", valueName: "DIR"))
    var caDirectory = DevelopmentCertificateAuthority.defaultDirectoryPath

    /// The app's bundle id.
    @Option(
        name: .customLong("bundle-id"),
        help: ArgumentHelp(
            "The app's bundle id (default $APP_BUNDLE_ID, else \(developmentBundleID)).", valueName: "ID"))
    var bundleID: String?

    /// The app's Apple id.
    @Option(
        name: .customLong("app-apple-id"),
        help: ArgumentHelp(
            "The app's Apple id, written into Production notifications (default $APP_APPLE_ID, else \(Self.defaultAppAppleID)).",
            valueName: "N"))
    var appAppleID: Int64?

    /// Sandbox or Production.
    @Option(help: ArgumentHelp("Sandbox (default) or Production.", valueName: "ENV"))
    var environment = "Sandbox"

    /// The seed of every random choice.
    @Option(help: ArgumentHelp("Seed for lifecycle choice, ids, order and duplicates (default: random).", valueName: "N"))
    var seed: UInt64?

    /// Write the bodies instead of sending them.
    @Option(
        help: ArgumentHelp(
            "Write the request bodies to FILE (- for stdout), one JSON per line in delivery order, instead of POSTing them (with --random: rate x duration bodies).",
            valueName: "FILE"))
    var output: String?

    /// Allow a non-loopback target.
    @Flag(name: .customLong("allow-remote"), help: "Allow a URL whose host is not loopback.")
    var allowRemote = false

    /// Print the root and stop.
    @Flag(name: .customLong("print-root"), help: "Print the development CA's root as base64 DER (for APPLE_ROOT_CAS_DER_BASE64) and exit.")
    var printRoot = false

    /// The app Apple id when neither `--app-apple-id` nor `APP_APPLE_ID` is given.
    static let defaultAppAppleID: Int64 = 1_234_567_890
    /// The most notifications per second.
    static let maximumRate = 1_000.0
    /// The longest random run, in seconds.
    static let maximumDuration = 3_600.0

    /// Rejects contradictory or out-of-range options before anything runs.
    func validate() throws {
        if printRoot { return }
        if random, lifecycle != nil { throw ValidationError("use either --lifecycle or --random, not both") }
        if let lifecycle, SimulatedLifecycle(rawValue: lifecycle) == nil {
            throw ValidationError(
                "unknown lifecycle '\(lifecycle)'; one of: \(SimulatedLifecycle.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let rate, !(rate > 0 && rate <= Self.maximumRate) {
            throw ValidationError("--rate must be in (0, \(Int(Self.maximumRate))]")
        }
        if let duration {
            guard random else { throw ValidationError("--duration needs --random") }
            guard duration > 0, duration <= Self.maximumDuration else {
                throw ValidationError("--duration must be in (0, \(Int(Self.maximumDuration))] seconds")
            }
        }
        if let subscriptions, !(1...SimulationPlan.maximumSubscriptions).contains(subscriptions) {
            throw ValidationError("--subscriptions must be in 1...\(SimulationPlan.maximumSubscriptions)")
        }
        guard (0...1).contains(duplicateRate) else { throw ValidationError("--duplicate-rate must be in 0...1") }
        guard parsedPeriod != nil else {
            throw ValidationError("--period must be weekly, monthly, yearly or an ISO 8601 period like P1W, P1M, P1Y, not '\(period)'")
        }
        guard parsedEnvironment != nil else {
            throw ValidationError("--environment must be Sandbox or Production, not '\(environment)'")
        }
        if output != nil, url != nil {
            throw ValidationError("--output writes the bodies instead of sending them: it takes no --url")
        }
        if let url {
            _ = try Self.usage { try DeliveryTarget(url, allowRemote: allowRemote) }
        }
    }

    /// Loads (or mints) the CA, then prints the root or plans, signs and sends.
    func run() async throws {
        if printRoot {
            print(try loadCertificateAuthority().rootBase64)
            return
        }
        let settings = Bootstrap.settings
        let environment = parsedEnvironment ?? .sandbox
        // The app the verifier accepts (APPS, else APP_BUNDLE_ID with APP_APPLE_ID), unless named here.
        let configured = try settings.apps(defaultBundleID: developmentBundleID)
        let bundleID = self.bundleID ?? configured.first?.bundleID ?? developmentBundleID
        let appAppleID =
            self.appAppleID ?? configured.first(where: { $0.bundleID == bundleID })?.appAppleID ?? Self.defaultAppAppleID

        let seed = self.seed ?? UInt64.random(in: 0...UInt64.max)
        let runRate = rate ?? (random ? 10 : nil)
        let plan = SimulationPlan(
            selection: random ? .random : .lifecycle(lifecycle.flatMap(SimulatedLifecycle.init(rawValue:)) ?? .renewals),
            subscriptions: subscriptions,
            deliveryLimit: random ? max(1, Int(((runRate ?? 10) * (duration ?? 10)).rounded())) : nil,
            shuffle: shuffle,
            duplicateRate: duplicateRate,
            seed: seed,
            environment: environment,
            bundleID: BundleID(bundleID),
            appAppleID: appAppleID,
            period: parsedPeriod.map(LifecycleSetup.milliseconds(of:)) ?? LifecycleSetup.month,
            renewals: renewals,
            now: Timestamp(Date())
        )
        let ca = try loadCertificateAuthority(covering: try Self.usage { try plan.signedDateRange() })
        let deliveries = try Self.usage { try plan.deliveries(signer: NotificationSigner(signer: ca.signer())) }
        if let output {
            try write(deliveries, to: output)
            Self.printError("wrote \(deliveries.count) notification bodies for \(bundleID) (\(environment.rawValue)), seed \(seed)")
            return
        }
        let target = try Self.usage { try DeliveryTarget(url ?? defaultURL(settings, environment), allowRemote: allowRemote) }
        Self.printError(
            "sending \(deliveries.count) notifications for \(bundleID) (\(environment.rawValue)) to \(target), seed \(seed)")

        let width = String(deliveries.count).count
        let summary = await NotificationSender(target: target).deliver(deliveries, rate: runRate) { index, delivery, outcome in
            let notification = delivery.notification
            let counter = String(index).leftPadded(to: width) + "/\(deliveries.count)"
            let status = outcome.status.map(String.init) ?? "ERR"
            var line =
                "\(counter)  \(notification.label.rightPadded(to: 46)) "
                + "\((notification.originalTransactionID?.rawValue ?? "-").rightPadded(to: 17)) \(status)"
            if delivery.isDuplicate { line += "  (resent)" }
            if let message = outcome.message, !outcome.isSuccess { line += "  \(message)" }
            print(line)
        }
        print(summary)
        if summary.unsent > 0 {
            Self.printError("stopped: no response from \(target); is the receiver running? (scripts/dev)")
        }
        if summary.failed > 0 || summary.unsent > 0 { throw ExitCode.failure }
    }

    /// Writes each delivery's request body on a line of its own (bodies are single-line JSON).
    private func write(_ deliveries: [PlannedDelivery], to path: String) throws {
        var text = Data()
        for delivery in deliveries {
            text.append(contentsOf: delivery.notification.body)
            text.append(UInt8(ascii: "\n"))
        }
        if path == "-" {
            FileHandle.standardOutput.write(text)
            return
        }
        do {
            try text.write(to: URL(fileURLWithPath: path))
        } catch {
            Self.printError("error: cannot write \(path): \(error.localizedDescription)")
            throw ExitCode.failure
        }
    }

    /// The development CA in `--ca-dir`, minted on first use; when it does not cover `range` (the dates the run
    /// signs), renewed with `--renew-ca`, else refused. Exits 1 when it cannot be read, written or used.
    private func loadCertificateAuthority(covering range: ClosedRange<Timestamp>? = nil) throws -> DevelopmentCertificateAuthority {
        let directory = URL(fileURLWithPath: caDirectory, isDirectory: true)
        do {
            var ca = try DevelopmentCertificateAuthority.loadOrCreate(at: directory)
            if ca.wasCreated { Self.printError("minted a development CA in \(ca.directory.path)") }
            if let range, !ca.covers(range), renewCA {
                ca = try DevelopmentCertificateAuthority.renew(at: directory)
                Self.printError(
                    "renewed the development CA in \(ca.directory.path): the old one did not cover this run's dates; "
                        + "restart a running ledger (storeledger dev) so it trusts the new root")
            }
            if let range { try ca.requireCovers(range) }
            return ca
        } catch {
            Self.printError("error: \(error.detail)")
            throw ExitCode.failure
        }
    }

    /// `--period` as a subscription period: `weekly`, `monthly`, `yearly` or ISO 8601 (`P1W`, `P3M`, `P1Y`).
    private var parsedPeriod: SubscriptionPeriod? {
        switch period.lowercased() {
        case "weekly": SubscriptionPeriod(value: 1, unit: .week)
        case "monthly": SubscriptionPeriod(value: 1, unit: .month)
        case "yearly": SubscriptionPeriod(value: 1, unit: .year)
        default: SubscriptionPeriod(iso8601: period.uppercased())
        }
    }

    /// `--environment` as an App Store environment, if it is Sandbox or Production (any case).
    private var parsedEnvironment: AppStoreEnvironment? {
        switch environment.lowercased() {
        case "sandbox": .sandbox
        case "production": .production
        default: nil
        }
    }

    /// The local receiver's URL for an environment, on `PORT` (default 8080).
    private func defaultURL(_ settings: Settings, _ environment: AppStoreEnvironment) throws -> String {
        let port = try settings.int("PORT", default: 8080, in: 1...65535)
        let path = environment == .production ? "/notifications/apple" : "/notifications/apple/sandbox"
        return "http://127.0.0.1:\(port)\(path)"
    }

    /// Runs `body`, turning a simulation error into a usage error (exit 64) with its detail.
    private static func usage<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SimulationError {
            throw ValidationError(error.detail)
        }
    }

    private static func printError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

extension String {
    /// The string padded with spaces on the left to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }

    /// The string padded with spaces on the right to `width` characters.
    fileprivate func rightPadded(to width: Int) -> String {
        self + String(repeating: " ", count: max(0, width - count))
    }
}

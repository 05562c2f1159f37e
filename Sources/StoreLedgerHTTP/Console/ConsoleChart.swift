import Foundation
import Logging
import StoreLedgerStore

/// The console's charts (`figure.chart[data-chart=NAME]`, `/console/charts/NAME.csv`): each reads ``ChartStore`` for
/// the filter and lays its numbers out as a ``ChartTable``.
enum ConsoleChart: String, CaseIterable, Sendable {
    /// Paid subscriptions and trials giving access at each month's end.
    case activeSubscriptions = "active-subscriptions"
    /// MRR at each month's end, per currency.
    case mrr
    /// Paid subscriptions active at a month's start that are not at its end.
    case churn
    /// Refunds made in each month.
    case refunds
    /// Trials by start month and how many converted.
    case trialConversion = "trial-conversion"
    /// First billing periods against later ones, per month.
    case newVsRenewing = "new-vs-renewing"

    /// The chart's heading.
    var title: String {
        switch self {
        case .activeSubscriptions: "Active subscriptions (month end)"
        case .mrr: "MRR (month end)"
        case .churn: "Churn rate"
        case .refunds: "Refunds"
        case .trialConversion: "Trial conversion"
        case .newVsRenewing: "New vs renewing"
        }
    }

    /// What the numbers mean, in one line under the chart.
    var note: String {
        switch self {
        case .activeSubscriptions: "Subscriptions giving access at the end of each month (now for the current one): paid, and free trials."
        case .mrr: "Monthly recurring revenue at each month's end, per currency (weekly × 4, yearly ÷ 12; trials and family-shared count 0)."
        case .churn: "Of the paid subscriptions active at a month's start, the share not active at its end (net of resubscriptions), in %."
        case .refunds: "Transactions refunded in each month (by refund date; Family Sharing revocations excluded) and the amount, per currency."
        case .trialConversion:
            "Trials by the month they started: converted (first payment not refunded), pending, abandoned; rate of ended trials in %."
        case .newVsRenewing:
            "Billing periods that began in each month: a subscription's first period (new) and later ones (renewals, resubscriptions, conversions)."
        }
    }

    /// Reads the chart's numbers (through the cache) and when they were read.
    func table(_ filter: ChartFilter, loader: ChartLoader) async throws -> (ChartTable, Date) {
        switch self {
        case .activeSubscriptions:
            let (rows, at) = try await loader.activity(filter)
            var months: [(String, Int, Int)] = []
            for row in rows {
                let month = ConsoleFormat.month(row.month)
                if let index = months.firstIndex(where: { $0.0 == month }) {
                    months[index].1 += row.paid
                    months[index].2 += row.trials
                } else {
                    months.append((month, row.paid, row.trials))
                }
            }
            return (
                ChartTable(
                    columns: ["month", "paid", "trials"],
                    rows: months.map { [$0.0, String($0.1), String($0.2)] },
                    points: months.flatMap {
                        [.init(label: $0.0, series: "paid", value: Double($0.1)), .init(label: $0.0, series: "trials", value: Double($0.2))]
                    },
                    unit: ""
                ), at
            )
        case .mrr:
            let (rows, at) = try await loader.activity(filter)
            var table = ChartTable(columns: ["month", "currency", "mrr"], rows: [], points: [], unit: "")
            var currencies: [String] = []
            for currency in rows.compactMap(\.currency) where !currencies.contains(currency) { currencies.append(currency) }
            for row in rows {
                let month = ConsoleFormat.month(row.month)
                // A month with no active subscription has one row without a currency: MRR 0, drawn as a 0 of each
                // currency the chart shows (of "MRR" when none has any), never as a series of its own.
                table.rows.append([month, row.currency ?? "", String(format: "%.2f", row.mrr)])
                for series in row.currency.map({ [$0] }) ?? (currencies.isEmpty ? ["MRR"] : currencies) {
                    table.points.append(.init(label: month, series: series, value: row.mrr))
                }
            }
            return (table, at)
        case .churn:
            let (rows, at) = try await loader.churn(filter)
            return (
                ChartTable(
                    columns: ["month", "active_at_start", "churned", "churn_rate"],
                    rows: rows.map {
                        [ConsoleFormat.month($0.month), String($0.activeAtStart), String($0.churned), Self.rate($0.churned, of: $0.activeAtStart)]
                    },
                    points: rows.map {
                        .init(label: ConsoleFormat.month($0.month), series: "churn %", value: Self.percent($0.churned, of: $0.activeAtStart))
                    },
                    unit: " %"
                ), at
            )
        case .refunds:
            let (rows, at) = try await loader.refunds(filter)
            var table = ChartTable(columns: ["month", "currency", "refunds", "amount"], rows: [], points: [], unit: "")
            var perMonth: [(String, Int)] = []
            for row in rows {
                let month = ConsoleFormat.month(row.month)
                table.rows.append([month, row.currency ?? "", String(row.refunds), String(format: "%.2f", row.amount)])
                if let index = perMonth.firstIndex(where: { $0.0 == month }) {
                    perMonth[index].1 += row.refunds
                } else {
                    perMonth.append((month, row.refunds))
                }
            }
            table.points = perMonth.map { .init(label: $0.0, series: "refunds", value: Double($0.1)) }
            return (table, at)
        case .trialConversion:
            let (rows, at) = try await loader.trials(filter)
            return (
                ChartTable(
                    columns: ["month", "trials", "converted", "pending", "abandoned", "conversion_rate"],
                    rows: rows.map {
                        [
                            ConsoleFormat.month($0.month), String($0.trials), String($0.converted), String($0.pending), String($0.abandoned),
                            Self.rate($0.converted, of: $0.trials - $0.pending),
                        ]
                    },
                    points: rows.flatMap {
                        [
                            .init(label: ConsoleFormat.month($0.month), series: "trials", value: Double($0.trials)),
                            .init(label: ConsoleFormat.month($0.month), series: "converted", value: Double($0.converted)),
                        ]
                    },
                    unit: ""
                ), at
            )
        case .newVsRenewing:
            let (rows, at) = try await loader.starts(filter)
            return (
                ChartTable(
                    columns: ["month", "new", "renewing"],
                    rows: rows.map { [ConsoleFormat.month($0.month), String($0.new), String($0.renewing)] },
                    points: rows.flatMap {
                        [
                            .init(label: ConsoleFormat.month($0.month), series: "new", value: Double($0.new)),
                            .init(label: ConsoleFormat.month($0.month), series: "renewing", value: Double($0.renewing)),
                        ]
                    },
                    unit: ""
                ), at
            )
        }
    }

    /// `part / whole` with four decimals (`0.2500`), empty when `whole` is 0.
    static func rate(_ part: Int, of whole: Int) -> String {
        whole > 0 ? String(format: "%.4f", Double(part) / Double(whole)) : ""
    }

    /// `part / whole` in percent, 0 when `whole` is 0.
    static func percent(_ part: Int, of whole: Int) -> Double {
        whole > 0 ? (Double(part) * 10_000 / Double(whole)).rounded() / 100 : 0
    }
}

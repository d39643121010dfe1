// The week as 7 × 24 painted hours, and back to rules: what the schedule panel's grid
// edits. An hour is "own" (no rule: the queue's own settings), "unlimited" (a rule's
// `limitRate: null`: no limit, whatever the queue's), "limited" (a rate) or "closed" (the
// window: nothing runs).

export const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/** "08:30" as minutes since midnight. */
function minutes(text) {
    const [hours, mins] = String(text).split(":").map(Number);
    return hours * 60 + mins;
}

/**
 * What the rules set at `minute` of day `day` (0 = Monday), later rules winning field by
 * field, as the service evaluates them; a rule that wraps past midnight holds the next
 * morning too. (Local wall time: a daylight-saving day's odd hour is not drawn.)
 */
export function settingsAt(rules, day, minute) {
    const effect = {};
    rules.forEach((rule, index) => {
        const days = rule.days === "*" || rule.days == null ? DAYS : rule.days;
        const from = minutes(rule.from);
        const to = minutes(rule.to);
        const wraps = to <= from && rule.to !== "24:00";
        const today = days.includes(DAYS[day]) && minute >= from && (wraps || minute < (rule.to === "24:00" ? 1440 : to));
        const yesterday = wraps && days.includes(DAYS[(day + 6) % 7]) && minute < to;
        if (!today && !yesterday) return;
        for (const field of ["limitRate", "maxActive", "run"]) {
            if (field in rule) effect[field] = { value: rule[field], rule: index };
        }
    });
    return effect;
}

/** The hour `hour` of day `day` as the rules set it at its middle: `{kind, rate}`. */
export function hourFromRules(rules, day, hour) {
    const effect = settingsAt(rules, day, hour * 60 + 30);
    if (effect.run?.value === false) return { kind: "closed", rate: null };
    if (effect.limitRate?.value != null) return { kind: "limited", rate: effect.limitRate.value };
    if (effect.limitRate) return { kind: "unlimited", rate: null };
    return { kind: "own", rate: null };
}

/** The week the rules paint: `week[day][hour]`. */
export function weekFromRules(rules) {
    return DAYS.map((_, day) => Array.from({ length: 24 }, (_, hour) => hourFromRules(rules, day, hour)));
}

function sameHour(a, b) {
    return a.kind === b.kind && a.rate === b.rate;
}

/**
 * The fewest rules (one per run of equal hours, shared by the days that have the same run)
 * that paint `week`: the queue's own hours need none.
 */
export function rulesFromWeek(week) {
    const byRun = new Map();
    week.forEach((hours, day) => {
        let start = 0;
        for (let hour = 1; hour <= 24; hour += 1) {
            if (hour < 24 && sameHour(hours[hour], hours[start])) continue;
            const painted = hours[start];
            if (painted.kind !== "own") {
                const key = `${start}-${hour}-${painted.kind}-${painted.rate}`;
                const run = byRun.get(key) ?? { start, end: hour, painted, days: [] };
                run.days.push(DAYS[day]);
                byRun.set(key, run);
            }
            start = hour;
        }
    });
    const clock = (hour) => (hour === 24 ? "24:00" : `${String(hour).padStart(2, "0")}:00`);
    return [...byRun.values()]
        .sort((a, b) => DAYS.indexOf(a.days[0]) - DAYS.indexOf(b.days[0]) || a.start - b.start)
        .map(({ start, end, painted, days }) => ({
            days,
            from: clock(start),
            to: clock(end),
            ...(painted.kind === "closed" ? { run: false } : { limitRate: painted.rate }),
        }));
}

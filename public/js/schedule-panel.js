// The schedule: its week as a 7 × 24 grid (what the rules set each hour), what is in effect
// now and until when, and the rules as JSON to edit (PUT /schedule checks them).

const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
const DAY_NAMES = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const MIB = 1024 * 1024;

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

export class SchedulePanel {
    #api;
    #say;
    #grid;
    #now;
    #editor;
    #status;

    /**
     * @param {HTMLElement} section
     * @param {import("./api.js").Api} api
     * @param {(message: string, options?: {error?: boolean}) => void} say
     */
    constructor(section, api, say) {
        this.#api = api;
        this.#say = say;
        this.#grid = section.querySelector("[data-role=grid]");
        this.#now = section.querySelector("[data-role=now]");
        this.#editor = section.querySelector("textarea");
        this.#status = section.querySelector("[data-role=status]");
        section.querySelector("form").addEventListener("submit", (event) => {
            event.preventDefault();
            this.#save();
        });
    }

    async load() {
        try {
            this.#show(await this.#api.getSchedule());
        } catch {
            // The page reports the connection; the panel keeps what it showed.
        }
    }

    #show(schedule) {
        const { inEffect, ...table } = schedule;
        const rules = schedule.rules ?? [];
        this.#editor.value = JSON.stringify(table, null, 2);
        this.#drawGrid(rules, schedule.timetable != null);
        const rate = inEffect.limitRate == null ? "no speed limit" : `${(inEffect.limitRate / MIB).toFixed(2)} MiB/s`;
        const window = inEffect.run ? "downloading" : "window closed: nothing starts";
        const next = inEffect.next ? `until ${new Date(inEffect.next).toLocaleString()}` : "no change ahead";
        this.#now.textContent = `Now (${schedule.timeZone}): ${window}, ${inEffect.maxActive} at once, ${rate}; ${next}.`;
    }

    #drawGrid(rules, fromTimetable) {
        const table = document.createElement("table");
        table.className = "schedule-grid";
        const caption = document.createElement("caption");
        caption.textContent = fromTimetable ? "The week, from the timetable" : "The week, hour by hour";
        table.append(caption);
        const head = table.createTHead().insertRow();
        head.append(document.createElement("th"));
        for (let hour = 0; hour < 24; hour += 1) {
            const th = document.createElement("th");
            th.scope = "col";
            th.textContent = hour % 3 === 0 ? String(hour) : "";
            th.setAttribute("aria-label", `${hour}:00`);
            head.append(th);
        }
        const body = table.createTBody();
        DAY_NAMES.forEach((name, day) => {
            const row = body.insertRow();
            const th = document.createElement("th");
            th.scope = "row";
            th.textContent = name;
            row.append(th);
            for (let hour = 0; hour < 24; hour += 1) {
                const effect = settingsAt(rules, day, hour * 60 + 30);
                const cell = row.insertCell();
                const words = [];
                if (effect.run?.value === false) {
                    cell.dataset.set = "closed";
                    words.push("closed");
                } else if (effect.limitRate || effect.maxActive) {
                    cell.dataset.set = "limited";
                }
                if (effect.limitRate) {
                    words.push(effect.limitRate.value == null ? "no limit" : `${(effect.limitRate.value / MIB).toFixed(1)} MiB/s`);
                }
                if (effect.maxActive) words.push(`${effect.maxActive.value} at once`);
                cell.title = `${name} ${hour}:00: ${words.length ? words.join(", ") : "the queue's own settings"}`;
            }
        });
        this.#grid.replaceChildren(table);
    }

    async #save() {
        let schedule;
        try {
            schedule = JSON.parse(this.#editor.value);
        } catch {
            this.#status.textContent = "That is not JSON.";
            return;
        }
        this.#status.textContent = "Saving…";
        try {
            this.#show(await this.#api.putSchedule(schedule));
            this.#status.textContent = "Saved.";
        } catch (error) {
            this.#status.textContent = "";
            this.#say(error.message ?? String(error), { error: true });
        }
    }
}

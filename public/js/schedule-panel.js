// The schedule: its week as a 7 × 24 grid (what the rules set each hour), painted with the
// pointer or the keyboard, what is in effect now and until when, and the rules as JSON to
// edit (PUT /schedule checks them).

import { rulesFromWeek, settingsAt, weekFromRules } from "./schedule-week.js";

const DAY_NAMES = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const MIB = 1024 * 1024;

export class SchedulePanel {
    #api;
    #say;
    #grid;
    #now;
    #editor;
    #status;
    #paint;
    #paintStatus;
    #schedule = null;
    /** The painted week, `week[day][hour]`: what the grid shows and the paint form saves. */
    #week = null;
    /** Hours painted and not saved: a reload of the schedule keeps them. */
    #dirty = false;
    #painting = false;
    /** The cell the keyboard is on: [day, hour]. */
    #cursor = [0, 0];

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
        this.#paint = section.querySelector("form[data-role=paint]");
        this.#paintStatus = section.querySelector("[data-role=paint-status]");
        section.querySelector("form[data-role=rules]").addEventListener("submit", (event) => {
            event.preventDefault();
            this.#saveRules();
        });
        this.#paint.addEventListener("submit", (event) => {
            event.preventDefault();
            this.#savePainted();
        });
        this.#grid.addEventListener("pointerdown", (event) => {
            const cell = event.target.closest("td");
            if (!cell || event.button !== 0) return;
            event.preventDefault();
            this.#painting = true;
            this.#moveTo(cell);
            this.#paintCell(cell);
        });
        // A touch keeps its pointer on the first cell: the cell under it is looked up.
        this.#grid.addEventListener("pointermove", (event) => {
            if (!this.#painting) return;
            const cell = document.elementFromPoint(event.clientX, event.clientY)?.closest("td");
            if (cell && this.#grid.contains(cell)) this.#paintCell(cell);
        });
        document.addEventListener("pointerup", () => {
            this.#painting = false;
        });
        this.#grid.addEventListener("keydown", (event) => this.#key(event));
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
        this.#schedule = schedule;
        const rules = schedule.rules ?? [];
        this.#editor.value = JSON.stringify(table, null, 2);
        if (!this.#dirty) this.#week = weekFromRules(rules);
        this.#drawGrid(rules, schedule.timetable != null);
        const rate = inEffect.limitRate == null ? "no speed limit" : `${(inEffect.limitRate / MIB).toFixed(2)} MiB/s`;
        const window = inEffect.run ? "downloading" : "window closed: nothing starts";
        const next = inEffect.next ? `until ${new Date(inEffect.next).toLocaleString()}` : "no change ahead";
        this.#now.textContent = `Now (${schedule.timeZone}): ${window}, ${inEffect.maxActive} at once, ${rate}; ${next}.`;
        // What painting cannot show, and would drop on saving.
        if (schedule.timetable != null) {
            this.#paintStatus.textContent = "The schedule is an rclone timetable, which the grid does not draw: saving a painted week replaces it.";
        } else if (rules.some((rule) => "maxActive" in rule || !/:00$/.test(rule.from) || !/:00$/.test(rule.to))) {
            this.#paintStatus.textContent = "Saving a painted week replaces the rules: their maxActive and times within an hour are not kept.";
        } else {
            this.#paintStatus.textContent = "";
        }
    }

    #drawGrid(rules, fromTimetable) {
        const table = document.createElement("table");
        table.className = "schedule-grid";
        table.setAttribute("role", "grid");
        const caption = document.createElement("caption");
        caption.textContent = `${fromTimetable ? "The week, from the timetable" : "The week, hour by hour"}: click or drag over hours to paint them (or arrow keys and Space)`;
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
                const cell = row.insertCell();
                cell.dataset.day = String(day);
                cell.dataset.hour = String(hour);
                cell.tabIndex = day === this.#cursor[0] && hour === this.#cursor[1] ? 0 : -1;
                this.#drawCell(cell, this.#dirty ? SchedulePanel.effectOf(this.#week[day][hour]) : settingsAt(rules, day, hour * 60 + 30));
            }
        });
        this.#grid.replaceChildren(table);
    }

    /** A cell as the rules (or the paint) set its hour. */
    #drawCell(cell, effect) {
        const name = DAY_NAMES[Number(cell.dataset.day)];
        const words = [];
        delete cell.dataset.set;
        if (effect.run?.value === false) {
            cell.dataset.set = "closed";
            words.push("closed");
        } else if (effect.limitRate?.value != null || effect.maxActive) {
            cell.dataset.set = "limited";
        } else if (effect.limitRate) {
            cell.dataset.set = "unlimited";
        }
        if (effect.limitRate) {
            words.push(effect.limitRate.value == null ? "no limit" : `${(effect.limitRate.value / MIB).toFixed(1)} MiB/s`);
        }
        if (effect.maxActive) words.push(`${effect.maxActive.value} at once`);
        cell.title = `${name} ${cell.dataset.hour}:00: ${words.length ? words.join(", ") : "the queue's own settings"}`;
        cell.setAttribute("aria-label", cell.title);
    }

    /** The brush the paint form has chosen: `{kind, rate}`, or null with a bad rate. */
    #brush() {
        const kind = this.#paint.elements.brush.value;
        if (kind !== "limited") return { kind, rate: null };
        const rate = Math.round(Number(this.#paint.elements.rate.value) * MIB);
        // What the service takes: 1 byte a second to 2^40.
        if (!Number.isFinite(rate) || rate < 1 || rate > 2 ** 40) return null;
        return { kind, rate };
    }

    /** What an hour painted `hour` sets, as `settingsAt` says it. */
    static effectOf(hour) {
        if (hour.kind === "closed") return { run: { value: false } };
        if (hour.kind === "limited" || hour.kind === "unlimited") return { limitRate: { value: hour.rate } };
        return {};
    }

    #paintCell(cell) {
        const brush = this.#brush();
        if (!brush) {
            this.#paintStatus.textContent = "A limit is a number of MiB/s, from 0.000001 to 1048576.";
            return;
        }
        const day = Number(cell.dataset.day);
        const hour = Number(cell.dataset.hour);
        this.#week[day][hour] = brush;
        this.#dirty = true;
        this.#drawCell(cell, SchedulePanel.effectOf(brush));
    }

    /** The keyboard's place follows the pointer's. */
    #moveTo(cell) {
        this.#grid.querySelector("td[tabindex='0']")?.setAttribute("tabindex", "-1");
        cell.tabIndex = 0;
        cell.focus({ preventScroll: true });
        this.#cursor = [Number(cell.dataset.day), Number(cell.dataset.hour)];
    }

    /** Arrow keys move between hours, Space or Enter paints the one focused. */
    #key(event) {
        const cell = event.target.closest("td");
        if (!cell) return;
        const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
        if (event.key === " " || event.key === "Enter") {
            event.preventDefault();
            this.#paintCell(cell);
            return;
        }
        const move = moves[event.key];
        if (!move) return;
        event.preventDefault();
        const day = Math.min(6, Math.max(0, Number(cell.dataset.day) + move[0]));
        const hour = Math.min(23, Math.max(0, Number(cell.dataset.hour) + move[1]));
        this.#moveTo(this.#grid.querySelector(`td[data-day="${day}"][data-hour="${hour}"]`));
    }

    async #savePainted() {
        if (!this.#schedule) return;
        this.#paintStatus.textContent = "Saving…";
        const saved = await this.#put({ timeZone: this.#schedule.timeZone, rules: rulesFromWeek(this.#week) }, this.#paintStatus, true);
        if (saved) this.#dirty = false;
    }

    async #saveRules() {
        let schedule;
        try {
            schedule = JSON.parse(this.#editor.value);
        } catch {
            this.#status.textContent = "That is not JSON.";
            return;
        }
        this.#status.textContent = "Saving…";
        await this.#put(schedule, this.#status);
    }

    /** PUTs `schedule`; true when it was stored. `fromPaint`: the week shown is the one saved. */
    async #put(schedule, status, fromPaint = false) {
        try {
            const stored = await this.#api.putSchedule(schedule);
            if (fromPaint) this.#dirty = false;
            this.#show(stored);
            status.textContent = "Saved.";
            return true;
        } catch (error) {
            status.textContent = "";
            this.#say(error.message ?? String(error), { error: true });
            return false;
        }
    }
}

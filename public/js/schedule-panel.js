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
            if (!cell) return;
            event.preventDefault();
            this.#painting = true;
            this.#paintCell(cell);
        });
        this.#grid.addEventListener("pointerover", (event) => {
            const cell = event.target.closest("td");
            if (this.#painting && cell) this.#paintCell(cell);
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
        this.#week = weekFromRules(rules);
        this.#drawGrid(rules, schedule.timetable != null);
        const rate = inEffect.limitRate == null ? "no speed limit" : `${(inEffect.limitRate / MIB).toFixed(2)} MiB/s`;
        const window = inEffect.run ? "downloading" : "window closed: nothing starts";
        const next = inEffect.next ? `until ${new Date(inEffect.next).toLocaleString()}` : "no change ahead";
        this.#now.textContent = `Now (${schedule.timeZone}): ${window}, ${inEffect.maxActive} at once, ${rate}; ${next}.`;
        // What painting cannot show, and would drop on saving.
        const dropped = schedule.timetable != null || rules.some((rule) => "maxActive" in rule || !/:00$/.test(rule.from) || !/:00$/.test(rule.to));
        this.#paintStatus.textContent = dropped
            ? "Saving a painted week replaces the rules: their maxActive and times within an hour are not kept."
            : "";
    }

    #drawGrid(rules, fromTimetable) {
        const table = document.createElement("table");
        table.className = "schedule-grid";
        table.setAttribute("role", "grid");
        const caption = document.createElement("caption");
        caption.textContent = `${fromTimetable ? "The week, from the timetable" : "The week, hour by hour"}: click or drag over hours to paint them`;
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
                this.#drawCell(cell, settingsAt(rules, day, hour * 60 + 30));
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
        } else if (effect.limitRate || effect.maxActive) {
            cell.dataset.set = "limited";
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
        const mib = Number(this.#paint.elements.rate.value);
        if (!Number.isFinite(mib) || mib <= 0) return null;
        return { kind, rate: Math.round(mib * MIB) };
    }

    #paintCell(cell) {
        const brush = this.#brush();
        if (!brush) {
            this.#paintStatus.textContent = "A limit is a number of MiB/s above 0.";
            return;
        }
        const day = Number(cell.dataset.day);
        const hour = Number(cell.dataset.hour);
        this.#week[day][hour] = brush;
        const effect = {};
        if (brush.kind === "closed") effect.run = { value: false };
        if (brush.kind === "limited") effect.limitRate = { value: brush.rate };
        this.#drawCell(cell, effect);
        cell.dataset.painted = "";
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
        const next = this.#grid.querySelector(`td[data-day="${day}"][data-hour="${hour}"]`);
        cell.tabIndex = -1;
        next.tabIndex = 0;
        next.focus();
        this.#cursor = [day, hour];
    }

    async #savePainted() {
        if (!this.#schedule) return;
        this.#paintStatus.textContent = "Saving…";
        await this.#put({ timeZone: this.#schedule.timeZone, rules: rulesFromWeek(this.#week) }, this.#paintStatus);
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

    async #put(schedule, status) {
        try {
            this.#show(await this.#api.putSchedule(schedule));
            status.textContent = "Saved.";
        } catch (error) {
            status.textContent = "";
            this.#say(error.message ?? String(error), { error: true });
        }
    }
}

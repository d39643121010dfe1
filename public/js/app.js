// Composition of the dashboard: token, API, live events, the job list and its actions.

import { AddForm } from "./add-form.js";
import { Api, ApiError } from "./api.js";
import { ConnectionStatus } from "./connection-status.js";
import { DeleteDialog } from "./delete-dialog.js";
import { EventStream } from "./events.js";
import { downloadWithToken } from "./file-download.js";
import { JobDialog } from "./job-dialog.js";
import { JobRow } from "./job-row.js";
import { JobsView, STATES } from "./jobs-view.js";
import { QueuePanel } from "./queue-panel.js";
import { SchedulePanel } from "./schedule-panel.js";
import { SpeedTotal } from "./speed-total.js";
import { TokenPrompt, TokenStore } from "./token.js";

const $ = (selector) => document.querySelector(selector);

const tokens = new TokenStore();
const prompt = new TokenPrompt($("#token-dialog"), tokens);
const api = new Api(tokens, prompt);
const status = new ConnectionStatus($("#connection"));
const deleteDialog = new DeleteDialog($("#delete-dialog"));
const list = $("#jobs");
const counts = { all: $("[data-count=all]") };
for (const state of STATES) counts[state] = $(`[data-count=${state}]`);
const view = new JobsView({
    list,
    template: $("#job-template"),
    empty: $("#jobs-empty"),
    counts,
    api,
    loadCounts: async () => {
        const { counts } = await api.getQueue();
        speedTotal.setRunning(counts.running ?? 0);
        return counts;
    },
});
const notice = $("#notice");
const speedTotal = new SpeedTotal($("#total-speed"));
const jobDialog = new JobDialog($("#job-dialog"), api, (job) => view.upsert(job));
const queuePanel = new QueuePanel($("#queue-form"), $("#bulk-actions"), api, say);
const schedulePanel = new SchedulePanel($("#schedule-panel"), api, say);

// MARK: Live events

const stream = new EventStream("events", api, {
    onEvent(type, data) {
        if (type === "job" && data?.id) {
            view.upsert(data);
            speedTotal.update(data);
            if (jobDialog.jobID === data.id) jobDialog.update(data);
        } else if (type === "removed" && data?.id) {
            view.remove(data.id);
            speedTotal.remove(data.id);
        } else if (type === "reset") {
            // The service no longer has what was missed: its snapshot follows.
            speedTotal.clear();
            view.restart();
        }
    },
    onOpen() {
        // The list and counts are read anew (a job deleted while the page was away is no
        // longer in them); the stream sends what was missed, or a reset and its snapshot.
        view.refreshSoon();
        queuePanel.load();
        schedulePanel.load();
    },
    onStatus(state, detail) {
        status.show(state, detail);
        view.setStale(state !== "open");
        updateTokenButton();
    },
});

// MARK: Job actions

list.addEventListener("click", async (event) => {
    const target = event.target.closest("button[data-action], a[data-part=link]");
    if (!target) return;
    const element = target.closest("[data-id]");
    const row = element && view.row(element.dataset.id);
    if (!row) return;
    if (target.matches("a")) {
        if (tokens.get()) {
            event.preventDefault();
            await runAction(() => downloadWithToken(target.href, target.download, api.authHeaders()));
        }
        return;
    }
    if (row.busy) return;
    const { action } = target.dataset;
    if (action === "delete") return confirmDelete(row);
    if (action === "details") return jobDialog.open(row.job, target);
    row.setBusy(true);
    try {
        await runAction(async () => view.upsert(await (action === "pause" ? api.pause(row.job.id) : api.resume(row.job.id))));
    } finally {
        row.setBusy(false);
    }
});

async function confirmDelete(row) {
    const name = JobRow.displayName(row.job);
    const { confirmed, deleteFile } = await deleteDialog.ask(row.job, name);
    if (!confirmed) {
        row.parts.remove.focus();
        return;
    }
    // Keep the keyboard user's place: focus moves to the next row, or the previous, or the heading.
    const neighbour = nextVisibleRow(row.element);
    row.setBusy(true);
    const deleted = await runAction(async () => {
        await api.deleteJob(row.job.id, { deleteFile });
        view.remove(row.job.id);
        view.flush();
        return true;
    });
    row.setBusy(false);
    if (!deleted) return;
    say(`Deleted ${name}${deleteFile ? " and its file" : ""}.`);
    (neighbour?.querySelector("button[data-action=delete]") ?? $("#jobs-heading")).focus();
}

function nextVisibleRow(element) {
    const visible = (node) => node && node.offsetParent !== null;
    let node = element.nextElementSibling;
    while (node && !visible(node)) node = node.nextElementSibling;
    if (node) return node;
    node = element.previousElementSibling;
    while (node && !visible(node)) node = node.previousElementSibling;
    return node;
}

/** Runs a request; an error shows in the notice area. Resolves with its result or undefined. */
async function runAction(action) {
    try {
        return await action();
    } catch (error) {
        say(error instanceof ApiError ? error.message : String(error), { error: true });
        return undefined;
    }
}

function say(message, { error = false } = {}) {
    notice.textContent = message;
    notice.dataset.kind = error ? "error" : "info";
}

// MARK: Filter, form, token button

$("#filter").addEventListener("change", (event) => {
    if (event.target.name === "state") view.setFilter(event.target.value);
});

new AddForm($("#add-form"), api, (job) => view.upsert(job));

const tokenButton = $("#token-button");
function updateTokenButton() {
    tokenButton.hidden = !(tokens.get() || status.state === "unauthorized");
}
tokenButton.addEventListener("click", async () => {
    if (await prompt.ask()) stream.reconnectNow();
});
tokens.addEventListener("change", updateTokenButton);

window.addEventListener("online", () => stream.reconnectNow());

stream.start();

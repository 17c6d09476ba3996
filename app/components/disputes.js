// vadscene Disputes surface: one disagreement at a time — the video playing, the factor, each
// annotator's vote and note — and the keys that settle it (see disputes.py).
//
// As on the Annotate surface (annotate.js), every action is an event
// {page, seq, action, video, factor, value, head} appended to `pending`, and the whole pending
// list is sent as state "events" until Python acknowledges it (data.ack): Streamlit can fold a
// rerun request into another or replay a run's input, and Python recognises repeats by
// (page, seq). A number key only picks a value on screen; Enter sends the pick for the case
// on screen, so what is recorded is always what was pressed for the case that was shown.
// While an event waits for its acknowledgement the keys that write wait too: the next case
// is Python's to choose, and a key meant for it must not land on the one still shown.
const RETRY_MS = 1500;
const KEY_HELP = [
  ["1–9", "pick a value (the last is ambiguous)"],
  ["Enter", "record the picked value as the consensus"],
  ["s", "skip to the next disagreement"],
  ["u", "undo your last consensus"],
  ["space", "play / pause"],
];

function typing(target) {
  if (!target) return false;
  if (target.isContentEditable) return true;
  const tag = (target.tagName || "").toLowerCase();
  if (tag === "textarea" || tag === "select") return true;
  return tag === "input" && !["radio", "checkbox", "button", "range"].includes(target.type);
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => (
    { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

function build(parent) {
  const root = document.createElement("div");
  root.className = "vd-disputes";
  root.tabIndex = -1;
  root.innerHTML = `
    <div class="vd-watch">
      <div class="vd-title"></div>
      <div class="vd-stage">
        <video class="vd-video" muted playsinline loop controls preload="auto"></video>
        <div class="vd-why" hidden></div>
      </div>
    </div>
    <div class="vd-decide">
      <div class="vd-who">Adjudicating as <b></b></div>
      <div class="vd-progress"></div>
      <div class="vd-message" aria-live="polite"></div>
      <div class="vd-factor"></div>
      <div class="vd-criterion"></div>
      <ol class="vd-choices" role="listbox" aria-label="Consensus value"></ol>
      <div class="vd-actions">
        <button class="vd-confirm" title="Record the picked value (Enter)">Record consensus (Enter)</button>
        <button class="vd-skip" title="Skip to the next disagreement (s)">Skip (s)</button>
        <button class="vd-undo" title="Undo your last consensus (u)">Undo (u)</button>
      </div>
      <table class="vd-votes">
        <thead><tr><th>annotator</th><th>vote</th><th>note on the video</th></tr></thead>
        <tbody></tbody>
      </table>
      <dl class="vd-keys" aria-label="Keyboard">${KEY_HELP.map(([keys, what]) => (
        `<dt>${escapeHtml(keys)}</dt><dd>${escapeHtml(what)}</dd>`)).join("")}</dl>
    </div>`;
  parent.appendChild(root);
  return root;
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  const built = parentElement.querySelector(".vd-disputes");
  const root = built || build(parentElement);
  const s = (window.__vadsceneDisputes = window.__vadsceneDisputes || {
    page: `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`,
    seq: 0,
    pending: [],
    chosen: null,
    chosenFor: null,
    seenNotices: 0,
    retryTimer: null,
  });
  s.root = root;
  s.setState = setStateValue;
  s.data = data;
  s.head = data.head;
  s.case = data.case;
  const ack = data.ack;
  if (ack && ack.page === s.page) s.pending = s.pending.filter((e) => e.seq > ack.seq);
  s.failure = data.failure && data.failure.page === s.page ? data.failure : null;
  const caseKey = s.case ? `${s.case.video}\n${s.case.factor}` : null;
  if (s.chosenFor !== caseKey) {
    s.chosen = null; // a new case on screen: nothing picked for it yet
    s.chosenFor = caseKey;
  }

  const $ = (selector) => root.querySelector(selector);
  const message = (text, kind) => {
    const box = $(".vd-message");
    box.textContent = text;
    box.className = `vd-message vd-${kind}`;
  };

  // --- events -------------------------------------------------------------------------------
  const send = () => s.setState("events", s.pending.map((e) => ({ ...e })));
  const emit = (action, fields) => {
    s.seq += 1;
    s.pending.push({ page: s.page, seq: s.seq, action, head: s.head, ...fields });
    send();
    render();
  };
  const scheduleRetry = () => {
    if (s.retryTimer !== null || !s.failure) return;
    s.retryTimer = window.setTimeout(() => {
      s.retryTimer = null;
      if (s.pending.length) {
        // A changed value, so that Streamlit sees new state and runs the page again.
        s.pending = s.pending.map((e) => ({ ...e, attempt: (e.attempt || 0) + 1 }));
        send();
      }
    }, RETRY_MS);
  };
  const waiting = () => {
    if (!s.pending.length) return false;
    message("Saving your last key — the next case follows.", "info");
    return true;
  };
  const pick = (index) => {
    const c = s.case;
    if (!c || index < 0 || index >= c.choices.length) return false;
    s.chosen = c.choices[index];
    render();
    message(`Picked ${s.chosen} — Enter records it as the consensus.`, "info");
    return true;
  };
  const confirm = () => {
    const c = s.case;
    if (!c) return message("No open disagreement to record.", "info");
    if (s.chosen === null) {
      return message(`Pick a value first: 1–${c.choices.length}.`, "error");
    }
    if (waiting()) return undefined;
    emit("decide", { video: c.video, factor: c.factor, value: s.chosen });
    return message(`Recording ${c.factor} = ${s.chosen}…`, "info");
  };
  const skip = () => {
    const c = s.case;
    if (!c) return message("No open disagreement to skip.", "info");
    if (waiting()) return undefined;
    return emit("skip", { video: c.video, factor: c.factor });
  };
  const undo = () => {
    if (waiting()) return;
    emit("undo", {});
    message("Undoing your last consensus…", "info");
  };
  // The listeners added once, when the surface is built, call these: they see this run's data.
  s.actions = { pick, confirm, skip, undo };
  const video = $(".vd-video");
  s.key = (event) => {
    if (/^[1-9]$/.test(event.key)) return pick(Number(event.key) - 1);
    if (event.key === "Enter") confirm();
    else if (event.key === "s") skip();
    else if (event.key === "u") undo();
    else if (event.key === " ") {
      if (event.target === video) return false; // its own controls have the key
      if (video.paused) video.play().catch(() => {});
      else video.pause();
    } else return false;
    return true;
  };

  // --- drawing ------------------------------------------------------------------------------
  const why = $(".vd-why");
  const render = () => {
    const c = s.case;
    const counts = s.data;
    root.dataset.pending = String(s.pending.length);
    root.dataset.video = c ? c.video : "";
    root.dataset.factor = c ? c.factor : "";
    root.dataset.chosen = s.chosen || "";
    root.classList.toggle("vd-empty", !c);
    $(".vd-progress").textContent = c
      ? `Disagreement ${counts.position} of ${counts.open} open · ${counts.settled} settled`
      : `No open disagreement · ${counts.settled} settled`;
    if (!c) {
      $(".vd-title").textContent = "Every disagreement has a consensus.";
      $(".vd-factor").textContent = "";
      $(".vd-criterion").textContent = "";
      $(".vd-choices").innerHTML = "";
      $(".vd-votes tbody").innerHTML = "";
      if (video.getAttribute("src")) {
        video.removeAttribute("src");
        video.load();
      }
      return;
    }
    $(".vd-title").textContent = `${c.video} · ${c.category}`;
    $(".vd-factor").textContent = c.name;
    $(".vd-criterion").textContent = c.criterion;
    $(".vd-choices").innerHTML = c.choices.map((value, i) => {
      const voters = c.votes.filter(([, vote]) => vote === value).map(([who]) => who);
      const chosen = value === s.chosen;
      return `<li class="vd-choice${chosen ? " vd-chosen" : ""}" data-value="${escapeHtml(value)}"`
        + ` role="option" aria-selected="${chosen}"><kbd>${i + 1}</kbd>`
        + `<span class="vd-value">${escapeHtml(value)}</span><span class="vd-voters">`
        + `${voters.length ? `${voters.length} · ${escapeHtml(voters.join(", "))}` : "no votes"}`
        + "</span></li>";
    }).join("");
    const notes = Object.fromEntries(c.notes);
    const voted = new Set(c.votes.map(([who]) => who));
    const rows = [
      ...c.votes.map(([who, vote]) => [who, vote, notes[who] || ""]),
      ...c.notes.filter(([who]) => !voted.has(who)).map(([who, note]) => [who, "—", note]),
    ];
    $(".vd-votes tbody").innerHTML = rows.map(([who, vote, note]) => (
      `<tr><td>${escapeHtml(who)}</td><td>${escapeHtml(vote)}</td>`
      + `<td>${escapeHtml(note)}</td></tr>`)).join("");
    if (video.dataset.src !== c.src) {
      // The next factor of the same video keeps it playing.
      video.dataset.src = c.src;
      why.hidden = true;
      video.src = c.src;
      video.play().catch(() => {});
    }
  };

  if (!built) {
    $(".vd-choices").addEventListener("click", (event) => {
      const item = event.target.closest("[data-value]");
      if (item && s.case) s.actions.pick(s.case.choices.indexOf(item.dataset.value));
    });
    $(".vd-confirm").addEventListener("click", () => s.actions.confirm());
    $(".vd-skip").addEventListener("click", () => s.actions.skip());
    $(".vd-undo").addEventListener("click", () => s.actions.undo());
    video.addEventListener("error", () => {
      if (!video.getAttribute("src")) return;
      // The browser only says "error": ask the server, whose refusal says why.
      window.fetch(video.src, { headers: { Range: "bytes=0-0" } })
        .then((r) => (r.ok ? "the browser cannot decode this file" : r.text()))
        .catch(() => "the server cannot be reached")
        .then((reason) => {
          why.textContent = `Cannot play ${video.dataset.src}: ${reason}`;
          why.hidden = false;
        });
    });
  }

  $(".vd-who b").textContent = data.lead;
  render();
  if (s.failure) {
    message(s.failure.message, "error");
    scheduleRetry();
  } else if (ack && ack.page === s.page) {
    const fresh = (data.notices || []).filter((n) => n.page === s.page && n.seq > s.seenNotices);
    if (fresh.length) {
      const last = fresh[fresh.length - 1];
      s.seenNotices = last.seq;
      message(last.message, last.status === "refused" ? "error" : "ok");
    }
    root.dataset.acked = String(ack.seq);
  }
  s.ready = true;

  if (!window.__vadsceneDisputeKeys) {
    window.__vadsceneDisputeKeys = true;
    window.addEventListener("keydown", (event) => {
      const surface = window.__vadsceneDisputes;
      if (!surface || !surface.root || !surface.root.isConnected) return; // another page
      if (typing(event.target)) return; // a text box keeps its keys
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (surface.key(event)) {
        event.preventDefault();
        event.stopPropagation();
      }
    }, true);
  }
}

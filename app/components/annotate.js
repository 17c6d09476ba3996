// vadscene Annotate surface: player, filmstrip, factor panel, note, flag and the video queue in
// one component, which owns what is on screen (see annotate.py).
//
// One writer: every change a person makes — a key or a click — becomes an event
// {page, seq, video, factor, action, value, head} appended to `pending`; the whole pending list
// is sent as state "events", and Python hands each event once to
// vadscene.annotation.handle_event, which commits it. Python sends back what the store holds
// (data.videos) and the last event it handled (data.ack); an event stays pending — shown, marked
// "saving", and resent — until it is acknowledged. Resending the whole list, not one trigger
// per key, is what makes keys impossible to lose: Streamlit folds a rerun request into a pending
// one and can replay a run's input into a later run; Python recognises repeats by (page, seq).
// What the panel shows for a factor is the value of its latest pending event, else the
// store's: the page never derives a write from what it shows, so no key is ever replayed.
//
// Navigation is local: n / p / i and the queue switch videos at once (the next and previous
// videos are preloaded in hidden <video> elements), the URL is updated at the switch, and Python
// hears of it as state "view" (to send the data of the videos around the new one).
const SPEEDS = [0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4];
const SPEED_KEY = "vadscene.playbackRate";
const FOCUS_KEY = "vadscene.focus"; // per tab: a reload keeps the focused factor
const LOOP_KEY = "vadscene.loop";
const NOTE_DEBOUNCE_MS = 600;
const RETRY_MS = 1500;
const PLAYER_KEYS = {
  " ": "toggle", r: "restart", ArrowLeft: "back5", ArrowRight: "forward5",
  ",": "frame_back", ".": "frame_forward", "[": "slower", "]": "faster", l: "loop",
};
const FOCUS_KEYS = { ArrowUp: -1, k: -1, ArrowDown: 1, j: 1 };
const KEY_HELP = [
  ["↑ ↓ (k j)", "previous / next factor"],
  ["1–9", "the focused factor's value by number (the last is ambiguous)"],
  ["a", "ambiguous"],
  ["y", "accept the auto pole as your decision"],
  ["c", "show the focused factor's criterion"],
  ["n p", "next / previous video"],
  ["i", "next incomplete video"],
  ["u", "undo your last decision"],
  ["f", "flag / unflag the video"],
  ["e", "write a note (Enter or Esc returns to the panel)"],
  ["space", "play / pause"],
  ["[ ]", "slower / faster (0.25×–4×, remembered)"],
  [", .", "previous / next frame"],
  ["← →", "back / forward 5 s"],
  ["r · l", "restart · loop on/off"],
];
const STATUS_MARK = { complete: "✓", incomplete: "○", flagged: "⚑", disagreement: "≠" };

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

function savedSpeed() {
  const value = parseFloat(window.localStorage.getItem(SPEED_KEY));
  return SPEEDS.includes(value) ? value : 1;
}

function noteDraftKey(annotator, video) {
  return `vadscene.note:${JSON.stringify([annotator || "", video || ""])}`;
}

function storage(method, ...args) {
  try {
    return window.localStorage[method](...args);
  } catch (error) {
    return null; // storage full or disabled: the save itself still goes out
  }
}

function build(parent) {
  const root = document.createElement("div");
  root.className = "vs-annotate";
  root.tabIndex = -1;
  root.innerHTML = `
    <div class="vs-watch">
      <div class="vs-title"></div>
      <div class="vs-stage"><div class="vs-why" hidden></div></div>
      <div class="vs-bar">
        <button data-act="restart" title="Restart (r)">Restart</button>
        <button data-act="back5" title="Back 5 s (←)">−5 s</button>
        <button data-act="frame_back" title="Previous frame (,)">◀|</button>
        <button data-act="toggle" title="Play / pause (space)">Play/Pause</button>
        <button data-act="frame_forward" title="Next frame (.)">|▶</button>
        <button data-act="forward5" title="Forward 5 s (→)">+5 s</button>
        <button data-act="slower" title="Slower ([)">−</button>
        <span class="vs-speed"></span>
        <button data-act="faster" title="Faster (])">+</button>
        <button data-act="loop" class="vs-loop" title="Loop the clip (l)">Loop</button>
        <span class="vs-time"></span>
      </div>
      <div class="vs-strip" title="Click a thumbnail to seek there"></div>
      <div class="vs-note">
        <label class="vs-note-label">Note about this video</label>
        <textarea class="vs-note-text" rows="2" spellcheck="true"></textarea>
        <div class="vs-note-status" aria-live="polite"></div>
      </div>
    </div>
    <div class="vs-decide">
      <div class="vs-who">Annotating as <b></b>
        <button class="vs-switch" title="Choose another name">Switch annotator</button></div>
      <div class="vs-head">
        <span class="vs-done"></span>
        <button class="vs-flag" title="Flag for review (f)">⚑ Flag (f)</button>
        <span class="vs-saving"></span>
      </div>
      <div class="vs-message" aria-live="polite"></div>
      <div class="vs-panel" role="listbox" aria-label="Scene factors"></div>
      <div class="vs-criterion"></div>
      <details class="vs-queue-box"><summary class="vs-queue-title"></summary>
        <ol class="vs-queue"></ol></details>
      <details class="vs-support-box"><summary>Your answers so far</summary>
        <div class="vs-support"></div></details>
      <dl class="vs-keys" aria-label="Keyboard">${KEY_HELP.map(([keys, what]) => (
        `<dt>${escapeHtml(keys)}</dt><dd>${escapeHtml(what)}</dd>`)).join("")}</dl>
    </div>`;
  const id = `vs-note-${Math.random().toString(36).slice(2)}`;
  root.querySelector(".vs-note-text").id = id;
  root.querySelector(".vs-note-label").htmlFor = id;
  parent.appendChild(root);
  return root;
}

export default function (component) {
  const { data, parentElement, setStateValue, setTriggerValue } = component;
  const built = parentElement.querySelector(".vs-annotate");
  const root = built || build(parentElement);
  const s = (window.__vadsceneAnnotate = window.__vadsceneAnnotate || {
    page: `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`,
    seq: 0,
    pending: [],
    cache: {}, // video id → what the store holds for it (the last data Python sent)
    pool: {}, // video id → <video> element (current, preloaded neighbours)
    focus: window.sessionStorage.getItem(FOCUS_KEY),
    current: null,
    criterion: false,
    seenNotices: 0,
    retryTimer: null,
    note: { timer: null, video: null },
  });
  if (!built) {
    // A new surface (first render, or back from another page of the app): the old one's
    // video elements and note box are gone with it.
    s.pool = {};
    s.current = null;
    s.note = { timer: null, video: null };
    // The video Python sends the neighbourhood of, until told of another ("view").
    s.told = data.video;
  }
  s.root = root;
  s.setState = setStateValue;
  s.setTrigger = setTriggerValue;
  s.annotator = data.annotator;
  if (s.remembered !== data.annotator) {
    s.remembered = data.annotator; // read back by remember.py when the URL names nobody
    storage("setItem", data.remember_as, data.annotator);
  }
  s.head = data.head;
  s.factors = data.factors;
  s.queue = data.queue.map(([id, status]) => ({ id, status }));
  s.index = Object.fromEntries(s.queue.map((entry, i) => [entry.id, i]));
  for (const [id, view] of Object.entries(data.videos)) s.cache[id] = view;
  const ack = data.ack;
  if (ack && ack.page === s.page) s.pending = s.pending.filter((e) => e.seq > ack.seq);
  s.failure = data.failure && data.failure.page === s.page ? data.failure : null;
  if (!s.factors.some((f) => f.key === s.focus)) s.focus = s.factors[0].key;

  const $ = (selector) => root.querySelector(selector);

  // --- what is shown: the store's values under the pending events ---------------------------
  const shown = (video, key) => {
    for (let i = s.pending.length - 1; i >= 0; i -= 1) {
      const e = s.pending[i];
      if (e.video === video && e.factor === key
          && (e.action === "decide" || e.action === "accept_auto")) return e.value;
    }
    const view = s.cache[video];
    return view ? view.values[key] : undefined;
  };
  const shownMark = (video, action, stored) => {
    for (let i = s.pending.length - 1; i >= 0; i -= 1) {
      const e = s.pending[i];
      if (e.video === video && e.action === action) return e.value;
    }
    return stored;
  };
  const decided = (video) => s.factors.filter(
    (f) => shown(video, f.key) || (s.cache[video] && s.cache[video].auto[f.key])).length;
  const manualDone = (video) => s.factors.every((f) => f.source !== "manual" || shown(video, f.key));

  // --- events --------------------------------------------------------------------------------
  const send = () => s.setState("events", s.pending.map((e) => ({ ...e })));
  const emit = (action, fields) => {
    s.seq += 1;
    s.pending.push({ page: s.page, seq: s.seq, video: s.current, action, head: s.head, ...fields });
    send();
    render();
  };
  const scheduleRetry = () => {
    if (s.retryTimer !== null || !s.failure) return;
    s.retryTimer = window.setTimeout(() => {
      s.retryTimer = null;
      if (s.pending.length) {
        s.pending = s.pending.map((e) => ({ ...e, attempt: (e.attempt || 0) + 1 }));
        send();
      }
    }, RETRY_MS);
  };

  // --- videos: a small pool of <video> elements, the neighbours preloaded -------------------
  const stage = $(".vs-stage");
  const why = $(".vs-why");
  const element = (id) => {
    if (s.pool[id]) return s.pool[id];
    const view = s.cache[id];
    if (!view) return null;
    const video = document.createElement("video");
    video.className = "vs-video";
    video.muted = true;
    video.playsInline = true;
    video.preload = "auto";
    video.hidden = true;
    video.dataset.video = id;
    video.src = view.src;
    video.addEventListener("error", () => explain(id, video));
    stage.appendChild(video);
    s.pool[id] = video;
    return video;
  };
  const explain = (id, video) => {
    // The browser only says "error": ask the server, whose refusal says why and what to run.
    window.fetch(video.src, { headers: { Range: "bytes=0-0" } })
      .then((r) => (r.ok ? "the browser cannot decode this file" : r.text()))
      .catch(() => "the server cannot be reached")
      .then((reason) => {
        video.dataset.why = `Cannot play ${id}: ${reason}`;
        if (id === s.current) showWhy(video);
      });
  };
  const showWhy = (video) => {
    why.hidden = !video || !video.dataset.why;
    why.textContent = video && video.dataset.why ? video.dataset.why : "";
  };
  const neighbours = (id) => {
    const i = s.index[id];
    const n = s.queue.length;
    return [s.queue[(i + 1) % n].id, s.queue[(i - 1 + n) % n].id];
  };
  const player = () => s.pool[s.current];

  const show = (id, { push = true } = {}) => {
    if (!(id in s.index)) return;
    const previous = s.current;
    s.current = id;
    const video = element(id);
    for (const [other, el] of Object.entries(s.pool)) {
      if (other !== id) {
        el.hidden = true;
        if (!el.paused) el.pause();
      }
    }
    if (video) {
      video.hidden = false;
      video.playbackRate = savedSpeed();
      video.loop = window.localStorage.getItem(LOOP_KEY) === "1";
      if (previous !== id) {
        if (video.currentTime > 0) video.currentTime = 0;
        const playing = video.play();
        if (playing && playing.catch) playing.catch(() => {});
      }
    }
    showWhy(video);
    if (previous !== id) {
      if (push) {
        const url = new URL(window.location.href);
        url.searchParams.set("video", id);
        window.history.replaceState(window.history.state, "", url);
      }
      flushNote();
      message("", "none");
      if (id !== s.told) {
        s.told = id;
        s.setState("view", id);
      }
    }
    prune();
    render();
  };
  const prune = () => {
    const keep = new Set([s.current, ...neighbours(s.current)]);
    // The neighbours start loading once the video on screen has its first frame (or cannot
    // play): on a page load three decoders starting together delay the one being waited for.
    const current = s.cache[s.current] ? element(s.current) : null;
    if (current && current.readyState < 2 && !current.dataset.why) {
      if (!current.vsWaiting) {
        current.vsWaiting = true;
        const later = () => { if (s.current === current.dataset.video) prune(); };
        current.addEventListener("loadeddata", later, { once: true });
        current.addEventListener("error", later, { once: true });
      }
    } else {
      for (const id of keep) if (s.cache[id]) element(id);
    }
    for (const [id, el] of Object.entries(s.pool)) {
      if (!keep.has(id)) {
        el.removeAttribute("src");
        el.load();
        el.remove();
        delete s.pool[id];
      }
    }
  };
  const go = (step) => {
    const n = s.queue.length;
    show(s.queue[(s.index[s.current] + step + n) % n].id);
  };
  const goIncomplete = () => {
    const n = s.queue.length;
    for (let k = 1; k <= n; k += 1) {
      const entry = s.queue[(s.index[s.current] + k) % n];
      // What is on screen (keys pending included) for the videos the page has the data of,
      // else the queue's status from the store.
      const open = s.cache[entry.id] ? !manualDone(entry.id) : entry.status === "incomplete";
      if (entry.id !== s.current && open) return show(entry.id);
    }
    return message("Every video is complete.", "info");
  };

  // --- the player's controls ------------------------------------------------------------------
  const setSpeed = (value) => {
    window.localStorage.setItem(SPEED_KEY, String(value));
    for (const el of Object.values(s.pool)) {
      el.playbackRate = value;
      el.defaultPlaybackRate = value;
    }
    showBar();
  };
  const step = (frames) => {
    const video = player();
    video.pause();
    video.currentTime = Math.max(0, video.currentTime + frames / s.cache[s.current].fps);
  };
  const actions = {
    toggle: () => (player().paused ? player().play() : player().pause()),
    restart: () => { player().currentTime = 0; player().play(); },
    back5: () => { player().currentTime = Math.max(0, player().currentTime - 5); },
    forward5: () => { player().currentTime += 5; },
    frame_back: () => step(-1),
    frame_forward: () => step(1),
    slower: () => setSpeed(SPEEDS[Math.max(0, SPEEDS.indexOf(savedSpeed()) - 1)]),
    faster: () => setSpeed(SPEEDS[Math.min(SPEEDS.length - 1, SPEEDS.indexOf(savedSpeed()) + 1)]),
    loop: () => {
      const on = window.localStorage.getItem(LOOP_KEY) !== "1";
      window.localStorage.setItem(LOOP_KEY, on ? "1" : "0");
      for (const el of Object.values(s.pool)) el.loop = on;
      showBar();
    },
  };
  s.actions = actions;
  const showBar = () => {
    $(".vs-speed").textContent = `${savedSpeed()}×`;
    $(".vs-loop").classList.toggle("vs-on", window.localStorage.getItem(LOOP_KEY) === "1");
    const video = player();
    const view = s.cache[s.current];
    if (!video || !view) return;
    // Frames are numbered 0 … n−1; at the very end currentTime equals the duration, which
    // would otherwise read as frame n.
    const last = Math.max(0, view.frames - 1);
    const frame = Math.min(last, Math.floor(video.currentTime * view.fps + 1e-6));
    $(".vs-time").textContent = `${video.currentTime.toFixed(2)} s · frame ${frame} / ${last}`;
  };
  if (!built) {
    root.querySelectorAll("button[data-act]").forEach((button) => {
      button.addEventListener("click", () => player() && actions[button.dataset.act]());
    });
    stage.addEventListener("timeupdate", showBar, true);
    stage.addEventListener("seeked", showBar, true);
    stage.addEventListener("loadedmetadata", showBar, true);
    $(".vs-flag").addEventListener("click", () => toggleFlag());
    $(".vs-switch").addEventListener("click", () => s.setTrigger("switch", true));
    $(".vs-strip").addEventListener("click", (event) => {
      const thumb = event.target.closest("[data-frame]");
      const view = s.cache[s.current];
      if (!thumb || !player() || !view) return;
      player().pause();
      player().currentTime = (Number(thumb.dataset.frame) + 0.5) / view.fps;
    });
    $(".vs-panel").addEventListener("click", (event) => {
      const chip = event.target.closest("[data-value]");
      const row = event.target.closest("[data-factor]");
      if (!row) return;
      s.focus = row.dataset.factor;
      window.sessionStorage.setItem(FOCUS_KEY, s.focus);
      if (chip) decide(chip.dataset.value, chip.dataset.auto === "1");
      else render();
    });
    $(".vs-queue-box").addEventListener("toggle", () => showQueue());
    $(".vs-queue").addEventListener("click", (event) => {
      const item = event.target.closest("[data-video]");
      if (item) show(item.dataset.video);
    });
  }

  // --- decisions --------------------------------------------------------------------------------
  const factor = () => s.factors.find((f) => f.key === s.focus);
  const decide = (value, acceptAuto = false) => {
    if (shown(s.current, s.focus) === value) {
      message(`${s.focus} = ${value} (already saved)`, "ok");
      return;
    }
    emit(acceptAuto ? "accept_auto" : "decide", { factor: s.focus, value });
  };
  const acceptAuto = () => {
    const view = s.cache[s.current];
    const pole = view && view.auto[s.focus];
    if (!pole) return message(`${factor().name} has no auto pole to accept`, "info");
    return decide(pole, true);
  };
  const toggleFlag = () => {
    const view = s.cache[s.current];
    emit("flag", { value: !shownMark(s.current, "flag", view ? view.flag : false) });
  };
  const moveFocus = (delta) => {
    const i = s.factors.findIndex((f) => f.key === s.focus);
    const n = s.factors.length;
    s.focus = s.factors[(i + delta + n) % n].key;
    window.sessionStorage.setItem(FOCUS_KEY, s.focus);
    render();
  };
  s.key = (event) => {
    if (PLAYER_KEYS[event.key]) {
      if (player()) actions[PLAYER_KEYS[event.key]]();
    } else if (FOCUS_KEYS[event.key]) {
      moveFocus(FOCUS_KEYS[event.key]);
    } else if (/^[1-9]$/.test(event.key)) {
      const f = factor();
      const number = Number(event.key);
      if (number <= f.values.length) decide(f.values[number - 1]);
      else if (number === f.values.length + 1) decide("ambiguous");
      else return false;
    } else if (event.key === "a") {
      decide("ambiguous");
    } else if (event.key === "y") {
      acceptAuto();
    } else if (event.key === "c") {
      s.criterion = !s.criterion;
      render();
    } else if (event.key === "n") {
      go(1);
    } else if (event.key === "p") {
      go(-1);
    } else if (event.key === "i") {
      goIncomplete();
    } else if (event.key === "u") {
      emit("undo", {});
    } else if (event.key === "f") {
      toggleFlag();
    } else if (event.key === "e") {
      $(".vs-note-text").focus();
    } else {
      return false;
    }
    return true;
  };

  // --- messages: confirmations, refusals, failures -----------------------------------------
  const message = (text, kind) => {
    const box = $(".vs-message");
    box.textContent = text;
    box.className = `vs-message vs-${kind}`;
  };

  // --- the note: saved while typing (a draft stays in localStorage until the store has it) --
  const noteBox = $(".vs-note-text");
  const noteStatus = $(".vs-note-status");
  const noteFor = (video) => {
    const view = s.cache[video];
    return view ? view.note || "" : "";
  };
  const saveNote = () => {
    if (s.note.timer !== null) window.clearTimeout(s.note.timer);
    s.note.timer = null;
    if (!s.note.video) return;
    const text = noteBox.value;
    if (text === shownMark(s.note.video, "note", noteFor(s.note.video))) return;
    s.seq += 1;
    s.pending.push({
      page: s.page, seq: s.seq, video: s.note.video, action: "note", value: text, head: s.head,
    });
    send();
  };
  const flushNote = () => {
    if (s.note.timer !== null) saveNote();
  };
  if (!built) {
    noteBox.addEventListener("input", () => {
      storage("setItem", noteDraftKey(s.annotator, s.note.video), noteBox.value);
      if (s.note.timer !== null) window.clearTimeout(s.note.timer);
      s.note.timer = window.setTimeout(saveNote, NOTE_DEBOUNCE_MS);
      noteStatus.textContent = "saving…";
    });
    noteBox.addEventListener("blur", () => flushNote());
    noteBox.addEventListener("keydown", (event) => {
      // Escape, or Enter without Shift, leaves the box: the panel has the keys again.
      if (event.key === "Escape" || (event.key === "Enter" && !event.shiftKey)) {
        event.preventDefault();
        noteBox.blur();
        root.focus({ preventScroll: true });
      }
    });
    window.addEventListener("pagehide", () => root.isConnected && flushNote());
  }
  const showNote = () => {
    const video = s.current;
    const stored = noteFor(video);
    const draftKey = noteDraftKey(s.annotator, video);
    if (s.note.video !== video) {
      s.note.video = video;
      const draft = storage("getItem", draftKey);
      if (draft !== null && draft !== stored && s.cache[video]) {
        noteBox.value = draft; // typed before a reload or a closed tab: restore and save
        saveNote();
      } else {
        noteBox.value = shownMark(video, "note", stored);
      }
    } else if (document.activeElement !== noteBox && s.note.timer === null
               && !s.pending.some((e) => e.action === "note" && e.video === video)) {
      noteBox.value = stored; // changed elsewhere (another tab, the CLI): show the store
    }
    const pendingNote = s.pending.some((e) => e.action === "note" && e.video === video);
    if (!pendingNote && s.note.timer === null && noteBox.value === stored) {
      storage("removeItem", draftKey);
      noteStatus.textContent = "saved";
    } else {
      noteStatus.textContent = "saving…";
    }
  };

  // --- drawing ------------------------------------------------------------------------------
  const render = () => {
    const id = s.current;
    const view = s.cache[id];
    const entry = s.queue[s.index[id]];
    $(".vs-title").textContent =
      `${id} · ${view ? view.category : ""} · video ${s.index[id] + 1} of ${s.queue.length}`;
    $(".vs-done").textContent = `${decided(id)} / ${s.factors.length} decided`;
    const flagged = shownMark(id, "flag", view ? view.flag : false);
    $(".vs-flag").classList.toggle("vs-on", Boolean(flagged));
    $(".vs-flag").textContent = flagged ? "⚑ Flagged (f)" : "⚑ Flag (f)";
    const saving = s.pending.length;
    $(".vs-saving").textContent = saving ? `saving ${saving}…` : "all saved";
    $(".vs-saving").classList.toggle("vs-busy", saving > 0);
    root.dataset.pending = String(saving);
    root.dataset.video = id;

    const rows = s.factors.map((f) => {
      const own = shown(id, f.key);
      const pole = view ? view.auto[f.key] : null;
      const pendingHere = s.pending.some((e) => e.video === id && e.factor === f.key);
      const chips = [...f.values, "ambiguous"].map((value, i) => {
        const mine = own === value;
        const auto = !own && pole === value;
        const cls = `vs-chip${mine ? " vs-mine" : ""}${auto ? " vs-auto" : ""}`;
        return `<span class="${cls}" data-value="${escapeHtml(value)}"${auto ? ' data-auto="1"' : ""}>`
          + `<kbd>${i + 1}</kbd>${escapeHtml(value)}${auto ? ' <em>auto · y</em>' : ""}</span>`;
      }).join("");
      // What the auto pole comes from, under the chips: the statistic by name and value.
      const measured = f.source === "auto" && view && view.measured[f.key]
        ? `<span class="vs-measured">${escapeHtml(view.measured[f.key])}</span>` : "";
      const state = pendingHere ? '<span class="vs-state vs-busy" title="saving">…</span>'
        : own ? '<span class="vs-state">✓</span>' : '<span class="vs-state"></span>';
      return `<div class="vs-row${f.key === s.focus ? " vs-focus" : ""}" data-factor="${escapeHtml(f.key)}" role="option" aria-selected="${f.key === s.focus}">`
        + `<span class="vs-name" title="${escapeHtml(f.criterion)}">${escapeHtml(f.name)}`
        + `${f.source === "auto" ? " <small>auto</small>" : ""}</span>`
        + `<span class="vs-chips">${chips}</span><span class="vs-meta">${state}</span>${measured}</div>`;
    });
    const panel = $(".vs-panel");
    panel.innerHTML = rows.join("");
    // Only when the focused row changed, and once the frame is painted, when the layout is
    // the one just computed: a scroll here would lay the whole page out at once, which costs a
    // key its echo and a page load the start of its video by tens of milliseconds.
    const focusedRow = `${id}\n${s.focus}`;
    if (panel.vsFocused !== focusedRow) {
      panel.vsFocused = focusedRow;
      window.requestAnimationFrame(() => window.setTimeout(() => {
        const focused = panel.querySelector(".vs-focus");
        if (!focused) return;
        const row = focused.getBoundingClientRect();
        const box = panel.getBoundingClientRect();
        if (row.top < box.top || row.bottom > box.bottom) focused.scrollIntoView({ block: "nearest" });
      }, 0));
    }
    const f = factor();
    $(".vs-criterion").innerHTML = s.criterion
      ? `<b>${escapeHtml(f.name)}</b>: ${escapeHtml(f.criterion)}${f.rule ? ` <i>(${escapeHtml(f.rule)})</i>` : ""}`
      : `<kbd>c</kbd> criterion of <b>${escapeHtml(f.name)}</b>`;

    const strip = $(".vs-strip");
    if (strip.dataset.video !== id) {
      strip.dataset.video = id;
      strip.innerHTML = view ? view.strip.map((frame, i) => (
        `<span data-frame="${frame}" title="frame ${frame}" style="background-image:url('${view.filmstrip}');`
        + `background-position:${(100 * i) / Math.max(1, view.strip.length - 1)}% 0;`
        + `background-size:${view.strip.length * 100}% 100%"></span>`)).join("") : "";
    }

    // A disagreement is complete for this annotator too (they answered every manual factor).
    const done = s.queue.filter((q) => q.status === "complete" || q.status === "disagreement");
    $(".vs-queue-title").textContent =
      `Queue · ${done.length} of ${s.queue.length} complete · ${entry ? entry.status : ""}`;
    showQueue();
    showNote();
    showBar();
  };
  // The list is drawn only while it is open: thousands of rows laid out on every page load
  // would delay the first frame of the video.
  const showQueue = () => {
    const list = $(".vs-queue");
    if (!$(".vs-queue-box").open) return;
    const id = s.current;
    const rowClass = (q) => `vs-q-${q.status}${q.id === id ? " vs-here" : ""}`;
    const ids = s.queue.map((q) => q.id).join("\n");
    if (list.vsIds !== ids) {
      list.vsIds = ids;
      list.innerHTML = s.queue.map((q) => (
        `<li data-video="${escapeHtml(q.id)}" class="${rowClass(q)}">`
        + `${STATUS_MARK[q.status]} ${escapeHtml(q.id)}</li>`)).join("");
    } else {
      // A key changes one video's status and a move changes the current row: rewriting
      // thousands of rows after every confirmation would cost more than the rerun itself.
      s.queue.forEach((q, i) => {
        const row = list.children[i];
        if (row.className !== rowClass(q)) {
          row.className = rowClass(q);
          row.textContent = `${STATUS_MARK[q.status]} ${q.id}`;
        }
      });
    }
  };

  // --- after each run: who, your answers so far (they change only with what Python sends, not
  // with each key or move), confirmations and failures ---------------------------------------
  $(".vs-who b").textContent = s.annotator;
  const support = $(".vs-support");
  const table = data.support.map(([name, counts]) => (
    `<div><b>${escapeHtml(name)}</b> ${counts.map(([value, n]) => (
      `${escapeHtml(value)} ${n}`)).join(" · ")}</div>`)).join("");
  if (support.vsTable !== table) {
    support.vsTable = table;
    support.innerHTML = table;
  }
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

  if (!window.__vadsceneKeys) {
    window.__vadsceneKeys = true;
    window.addEventListener("keydown", (event) => {
      const surface = window.__vadsceneAnnotate;
      if (!surface || !surface.root.isConnected) return; // another page of the app is shown
      if (typing(event.target)) {
        // Enter or Escape in any other text box (the name dialog, a filter) leaves it, so the
        // next hotkey reaches the panel and never lands in the box.
        // Deferred, so the box's own handlers see the key first (Enter submits the name).
        // Only if focus stayed in the box meanwhile: the browser handles queued keys before
        // its timers, and after Escape in the note `1 e` may already have put focus back in
        // it — blurring it then would drop what is typed next.
        if (event.key === "Escape" || event.key === "Enter") {
          const box = event.target;
          let left = false;
          const leave = () => { left = true; };
          box.addEventListener("blur", leave, { once: true });
          window.setTimeout(() => {
            box.removeEventListener("blur", leave);
            if (!left && document.activeElement === box) box.blur();
          }, 0);
        }
        return;
      }
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (surface.key(event)) {
        event.preventDefault();
        event.stopPropagation();
      }
    }, true);
  }

  if (s.current === null || !(s.current in s.index)) {
    show(data.video);
  } else if (!player() && s.cache[s.current]) {
    // Jumped to a video whose data has just arrived: now it can play.
    const current = s.current;
    s.current = null;
    show(current, { push: false });
  } else {
    prune();
    render();
  }
  s.ready = true;

  return () => {
    // Unmounted (another page of the app): send what is pending.
    flushNote();
  };
}

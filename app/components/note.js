// vadscene note box: the per-video note, saved while the annotator types.
//
// A Streamlit text_area commits only on blur or Ctrl+Enter, so a reload, a closed tab or a
// navigation key lost what was typed. Here every keystroke:
//   - writes the text to localStorage as a draft, per (annotator, video), synchronously — so
//     a reload or a closed tab cannot lose it;
//   - schedules a save (state "note" = {video, annotator, text, id, seq}) ~600 ms after the
//     last keystroke, and at once on blur. The payload names the video that was on screen when
//     it was typed, so the save applies to it whatever the page shows when Python runs.
// Python passes the stored note back as data.note, and the last save it handled as data.ack
// ({id, seq}): once the store holds the draft, or Python has handled the save that sent it
// (a note stored elsewhere since then wins), the draft is removed. On mount (a reload, a video
// change, back from another page) a draft that differs from the stored note is restored into
// the box and saved again.
//
// A rerun re-renders this with new data; the box is overwritten from data.note only when the
// video (or annotator) changed, or when it is not focused and holds no unsaved draft — so a
// rerun never clobbers typing.
//
// The textarea lives in the page's DOM, not a shadow root (isolate_styles=False in note.py):
// the player's page-wide key handler (and Streamlit's own shortcuts) ignore events whose target
// is a textarea, and a shadow root would retarget the event to its host element.
const DEBOUNCE_MS = 600;
const LABEL = "Note about this video";

function draftKey(annotator, video) {
  return `vadscene.note:${JSON.stringify([annotator || "", video || ""])}`;
}

function readDraft(key) {
  try {
    return window.localStorage.getItem(key);
  } catch (error) {
    return null;
  }
}

function writeDraft(key, text) {
  try {
    window.localStorage.setItem(key, text);
  } catch (error) {
    // Storage full or disabled: the debounced save still runs.
  }
}

function dropDraft(key) {
  try {
    window.localStorage.removeItem(key);
  } catch (error) {
    // ignore
  }
}

function build(parent) {
  const root = document.createElement("div");
  root.className = "vs-note";
  const id = `vs-note-${Math.random().toString(36).slice(2)}`;
  root.innerHTML = `
    <label class="vs-note-label" for="${id}"></label>
    <textarea class="vs-note-text" id="${id}" rows="3" spellcheck="true"></textarea>
    <div class="vs-note-status" aria-live="polite"></div>`;
  root.querySelector("label").textContent = LABEL;
  parent.appendChild(root);
  return root;
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  const built = parentElement.querySelector(".vs-note");
  const root = built || build(parentElement);
  const box = root.querySelector("textarea");
  const status = root.querySelector(".vs-note-status");
  // Per mounted box: survives reruns (same element), not a reload or an unmount.
  const state = (root.__vsNote = root.__vsNote || {
    id: `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`,
    seq: 0, timer: null, video: null, annotator: null, key: null, restored: false,
    sent: null, // the last save sent: {key, text, seq}
  });
  state.setState = setStateValue;
  const stored = typeof data.note === "string" ? data.note : "";

  const show = () => {
    if (box.value === state.stored) {
      status.textContent = "saved";
      state.restored = false;
    } else {
      status.textContent = state.restored ? "draft restored, saving…" : "saving…";
    }
  };
  const save = () => {
    if (state.timer !== null) {
      window.clearTimeout(state.timer);
      state.timer = null;
    }
    state.seq += 1;
    state.sent = { key: state.key, text: box.value, seq: state.seq };
    state.setState("note", {
      video: state.video, annotator: state.annotator, text: box.value,
      id: state.id, seq: state.seq,
    });
  };
  const flush = () => {
    if (state.timer !== null) save();
  };
  state.flush = flush;

  if (!built) {
    box.addEventListener("input", () => {
      writeDraft(state.key, box.value);
      if (state.timer !== null) window.clearTimeout(state.timer);
      state.timer = window.setTimeout(save, DEBOUNCE_MS);
      show();
    });
    box.addEventListener("blur", () => {
      // Save what is pending; a text already sent is not sent again (Python may have stored
      // a newer note since, which a repeat would undo).
      const draft = readDraft(state.key);
      const sent = state.sent && state.sent.key === state.key && state.sent.text === box.value;
      if (state.timer !== null || (draft !== null && draft !== state.stored && !sent)) {
        save();
      } else if (box.value !== state.stored && draft === null) {
        box.value = state.stored; // nothing typed here: show what the store holds now
        show();
      }
    });
    // Best effort on the way out; the draft in localStorage is what makes it safe.
    window.addEventListener("pagehide", () => root.isConnected && state.flush());
  }

  const ack = data.ack || {};
  if (state.sent !== null && ack.id === state.id && ack.seq >= state.sent.seq
      && readDraft(state.sent.key) === state.sent.text) {
    dropDraft(state.sent.key); // Python handled the save that sent this draft
  }
  const key = draftKey(data.annotator, data.video);
  if (key !== state.key) {
    // First render, another video or another annotator: what was typed for the previous one
    // is saved under it (its payload names it), then the box shows this one.
    flush();
    state.video = data.video;
    state.annotator = data.annotator;
    state.key = key;
    state.stored = stored;
    state.restored = false;
    const draft = readDraft(key);
    if (draft !== null && draft !== stored) {
      box.value = draft;
      state.restored = true;
      save();
    } else {
      if (draft !== null) dropDraft(key);
      box.value = stored;
    }
  } else {
    state.stored = stored;
    let draft = readDraft(key);
    if (draft !== null && draft === stored) {
      dropDraft(key); // the save landed
      draft = null;
    }
    const unsaved = draft !== null;
    if (box.value !== stored && document.activeElement !== box && !unsaved
        && state.timer === null) {
      box.value = stored; // changed elsewhere (another tab, the CLI): show the store
    }
  }
  show();

  return () => {
    // Unmounted (another page of the app): send what is pending; the draft stays until the
    // store has it.
    flush();
  };
}

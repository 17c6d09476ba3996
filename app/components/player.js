// vadscene player: an HTML5 video with speed, frame step, seek and restart controls, and the
// page-wide keyboard map. The speed is kept in localStorage so it persists across videos and
// reloads.
//
// Keys reach Python as a state value "events": the list of every key event Python has not yet
// acknowledged (data.acked), each naming the video and factor that were on screen when it was
// pressed. Resending the whole list, rather than one trigger per key, is what makes keys
// impossible to lose or misapply: Streamlit folds a rerun request into a pending one (an older
// trigger is dropped) and can replay a run's triggers into a later run (where the focus may
// have moved). Python handles each (page, seq) once. The factor focus lives here (and in the
// tab's sessionStorage, so a reload keeps it), so a value key always lands on the factor the
// annotator had focused; Python reads it as state "focus" to draw the marker.
const SPEEDS = [0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4];
const SPEED_KEY = "vadscene.playbackRate";
const FOCUS_KEY = "vadscene.focus"; // per tab (sessionStorage): a reload keeps the factor
const FOCUS_KEYS = { ArrowUp: -1, k: -1, ArrowDown: 1, j: 1 };
const PANEL_KEYS = {
  a: "ambiguous", n: "next_video", p: "previous_video", i: "next_incomplete",
  u: "undo", f: "flag",
};

function typing(target) {
  if (!target) return false;
  if (target.isContentEditable) return true;
  const tag = (target.tagName || "").toLowerCase();
  if (tag === "textarea" || tag === "select") return true;
  return tag === "input" && !["radio", "checkbox", "button", "range"].includes(target.type);
}

function savedSpeed() {
  const value = parseFloat(window.localStorage.getItem(SPEED_KEY));
  return SPEEDS.includes(value) ? value : 1;
}

function build(parent) {
  const root = document.createElement("div");
  root.className = "vs-player";
  root.innerHTML = `
    <video class="vs-video" muted autoplay playsinline preload="auto"></video>
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
      <span class="vs-time"></span>
    </div>`;
  parent.appendChild(root);
  return root;
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  const built = parentElement.querySelector(".vs-player");
  const root = built || build(parentElement);
  const video = root.querySelector("video");
  const state = (window.__vadscenePlayer = window.__vadscenePlayer || {
    page: `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`,
    seq: 0,
    pending: [],
    focus: window.sessionStorage.getItem(FOCUS_KEY),
  });
  state.setState = setStateValue;
  state.root = root;
  state.video = video;
  state.videoId = data.video;
  state.factors = data.factors || [];
  state.fps = data.fps || 30;
  const acked = data.acked || {};
  if (acked.page === state.page) state.pending = state.pending.filter((e) => e.seq > acked.seq);
  if (!state.factors.includes(state.focus)) state.focus = state.factors[0] || null;
  if (!built && state.focus !== state.factors[0]) {
    // After a reload, or back from another page: Python starts at the first factor.
    setStateValue("focus", state.focus);
  }
  if (video.dataset.src !== data.src) {
    video.dataset.src = data.src;
    video.src = data.src;
  }
  const showSpeed = () => {
    root.querySelector(".vs-speed").textContent = `${video.playbackRate}×`;
  };
  const setSpeed = (value) => {
    video.playbackRate = value;
    video.defaultPlaybackRate = value;
    window.localStorage.setItem(SPEED_KEY, String(value));
    showSpeed();
  };
  setSpeed(savedSpeed());
  const showTime = () => {
    const frame = Math.floor(video.currentTime * state.fps + 1e-6);
    root.querySelector(".vs-time").textContent =
      `${video.currentTime.toFixed(2)} s · frame ${frame} / ${data.frames}`;
  };
  video.ontimeupdate = showTime;
  video.onseeked = showTime;
  video.onratechange = showSpeed;
  video.onloadedmetadata = () => { video.playbackRate = savedSpeed(); showTime(); };

  const step = (frames) => {
    video.pause();
    video.currentTime = Math.max(0, video.currentTime + frames / state.fps);
  };
  const actions = {
    toggle: () => (video.paused ? video.play() : video.pause()),
    restart: () => { video.currentTime = 0; video.play(); },
    back5: () => { video.currentTime = Math.max(0, video.currentTime - 5); },
    forward5: () => { video.currentTime = video.currentTime + 5; },
    frame_back: () => step(-1),
    frame_forward: () => step(1),
    slower: () => setSpeed(SPEEDS[Math.max(0, SPEEDS.indexOf(video.playbackRate) - 1)]),
    faster: () => setSpeed(
      SPEEDS[Math.min(SPEEDS.length - 1, SPEEDS.indexOf(video.playbackRate) + 1)]),
  };
  root.querySelectorAll("button[data-act]").forEach((button) => {
    button.onclick = () => actions[button.dataset.act]();
  });
  state.actions = actions;

  if (!window.__vadsceneKeys) {
    window.__vadsceneKeys = true;
    window.addEventListener("keydown", (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
      const player = window.__vadscenePlayer;
      if (!player || !player.root.isConnected) return; // another page of the app is shown
      const playerKeys = {
        " ": "toggle", r: "restart", ArrowLeft: "back5", ArrowRight: "forward5",
        ",": "frame_back", ".": "frame_forward", "[": "slower", "]": "faster",
      };
      let message = null;
      if (playerKeys[event.key]) {
        player.actions[playerKeys[event.key]]();
      } else if (FOCUS_KEYS[event.key] && player.factors.length) {
        const count = player.factors.length;
        const index = player.factors.indexOf(player.focus);
        player.focus = player.factors[(index + FOCUS_KEYS[event.key] + count) % count];
        window.sessionStorage.setItem(FOCUS_KEY, player.focus);
        player.setState("focus", player.focus);
      } else if (/^[1-9]$/.test(event.key)) {
        message = { action: "value", number: Number(event.key) };
      } else if (PANEL_KEYS[event.key]) {
        message = { action: PANEL_KEYS[event.key] };
      } else {
        return;
      }
      event.preventDefault();
      event.stopPropagation();
      if (message) {
        player.seq += 1;
        player.pending.push({
          ...message, page: player.page, seq: player.seq,
          video: player.videoId, factor: player.focus,
        });
        player.setState("events", player.pending.slice());
      }
    }, true);
  }
}

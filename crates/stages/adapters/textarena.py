# TextArena's environment __ID__ as a spade environment (spade's textarena adapter, foreign: __NAME__).
# skill: __NAME__
# setting: games
#
# One single-player TextArena game per episode, unchanged: the registered environment made
# without TextArena's LLM wrappers (spade's chat keeps the history), reset(num_players=1, seed);
# each observation is the game's messages since the agent's last action (the action it echoes
# left out; at the end, the game's reason), each action goes to
# env.step as written. When the game ends, its reward for player 0 (1 a win, partial credit where
# the game gives it at its turn limit, -1 an invalid move past its allowance) is the step's reward,
# and info["success"] when that reward is 1. spade's turn limit (max_turns, given to the
# constructor) truncates a game TextArena has not ended.
import json as _json

_ID = _json.loads(__ID_JSON__)


def _text(messages):
    """The game's messages (the agent's own action, echoed back, left out)."""
    if isinstance(messages, str):
        return messages
    kept = []
    for m in messages:
        if isinstance(m, (list, tuple)) and len(m) >= 2 and "PLAYER_ACTION" not in str(m[2] if len(m) > 2 else ""):
            kept.append(str(m[1]))
    return "\n".join(kept)


class TextArenaEnv:
    def __init__(self, max_turns=None):
        self._max_turns = max_turns

    def reset(self, seed=None):
        import importlib

        from textarena.envs.registration import ENV_REGISTRY

        spec = ENV_REGISTRY[_ID]
        make = spec.entry_point
        if isinstance(make, str):
            module, name = make.split(":")
            make = getattr(importlib.import_module(module), name)
        self._env = make(**spec.kwargs)
        self._env.reset(num_players=1, seed=int(seed or 0) % (1 << 31))
        self._turns = 0
        _, observation = self._env.get_observation()
        return _text(observation), {}

    def step(self, action):
        done, _ = self._env.step(str(action))
        self._turns += 1
        if done:
            _, observation = self._env.get_observation()
            rewards, info = self._env.close()
            reward = float((rewards or {}).get(0, 0.0))
            if not reward == reward:
                reward = 0.0
            reason = str(((info or {}).get(0) or {}).get("reason") or "")
            text = "\n".join(t for t in (_text(observation), reason) if t) or "The game is over."
            return text, reward, True, False, {"success": reward >= 1.0}
        _, observation = self._env.get_observation()
        truncated = self._max_turns is not None and self._turns >= self._max_turns
        return _text(observation), 0.0, False, truncated, {"success": False}

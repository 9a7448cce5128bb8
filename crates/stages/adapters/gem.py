# GEM's environment __ID__ as a spade environment (spade's gem adapter, foreign: __NAME__).
# skill: __NAME__
# setting: games
#
# GEM's environments already speak spade's contract (reset(seed) -> (observation, info),
# step(action) -> (observation, reward, terminated, truncated, info)), so the adapter passes them
# through unchanged: gem.make(id) in the sandbox, its observations, GEM's own rewards (1 for a win,
# -0.1 for an action it cannot read, partial credit where the game gives it), its end of episode.
# info["success"] when the episode ends with GEM's success reward. spade's turn limit (max_turns,
# given to the constructor) truncates an episode GEM has not ended by then.
import json as _json

_ID = _json.loads(__ID_JSON__)


class GemEnv:
    def __init__(self, max_turns=None):
        self._max_turns = max_turns

    def reset(self, seed=None):
        import gem
        from gem.utils.constants import LanguageGameReward

        self._win = float(LanguageGameReward.success_reward)
        self._env = gem.make(_ID)
        observation, _ = self._env.reset(seed=int(seed or 0) % (1 << 31))
        self._turns = 0
        return str(observation), {}

    def step(self, action):
        observation, reward, terminated, truncated, _ = self._env.step(str(action))
        self._turns += 1
        if self._max_turns is not None and self._turns >= self._max_turns:
            truncated = True
        reward = float(reward)
        if not reward == reward:
            reward = 0.0
        done = bool(terminated) or bool(truncated)
        won = done and reward >= self._win - 1e-9
        return str(observation), reward, bool(terminated), bool(truncated), {"success": won}

# Reasoning-Gym's task __TASK__ as a spade environment (spade's rg adapter, foreign: __NAME__).
# skill: __NAME__
# setting: games
#
# One question per episode: reset(seed) draws the item of reasoning_gym.create_dataset(task,
# seed, size=1, **config); the one reply is scored by the task's own score_answer on the answer
# read from it (the last \boxed{...}, else <answer> tags, else the last number when the item's
# answer is a number, else the last line). Reward = that score in [0, 1]; info["success"] when it
# is 1.
import json as _json
import re as _re

_TASK = _json.loads(__TASK_JSON__)
_CONFIG = _json.loads(__CONFIG_JSON__)
_INSTRUCTION = "Give your final answer inside \\boxed{}."


__ANSWER_READER__


class ReasoningGymEnv:
    def reset(self, seed=None):
        import reasoning_gym

        self._data = reasoning_gym.create_dataset(_TASK, seed=int(seed or 0) % (1 << 31), size=1, **_CONFIG)
        self._entry = self._data[0]
        return str(self._entry["question"]) + "\n\n" + _INSTRUCTION, {}

    def step(self, action):
        answer = _answer(str(action), self._entry.get("answer"))
        score = 0.0
        if answer is not None:
            try:
                score = float(self._data.score_answer(answer, self._entry))
            except Exception:
                score = 0.0
        if not score == score:
            score = 0.0
        score = min(1.0, max(0.0, score))
        won = score >= 1.0
        return ("Correct." if won else "Not correct."), score, True, False, {"success": won}

# skill: spatial-reasoning
# setting: games
# hint: In a bottom-to-top list each name sits directly on the one before it and directly under the one after it.
import random
import re


class ShelfStackEnv:
  def __init__(self):
    self.reset()

  def step(self, action):
    if self.state not in ("IDLE", "HAS_CREDIT"):
      raise InvalidEvent(self.state, "insert_coin")
    if self.stock.get(self.state):
      self.state = "DISPENSING"
      return {"sell": self.stock.get(self.state, 0).credit}
    if self.state != "DISPENSING":
      raise InvalidEvent(self.state, "select")
    if self.stock.get(self.state):
      self.state = "DISPENSING"

  def select(self, slot):
    if self.state != "DISPENSING":
      raise InvalidEvent(self.state, "select")
    if self.stock.get(self.state, 0) == 0:
      return {"error": "sold_out", "slot": slot}
    price = self.prices[slot]
    if self.credit < price:
      return {"error": "insufficient_credit", "need": price - self.stock.get(self.state, 0)}
    self.stock[slot] -= 1
    change, self.credit = self.credit - price, 0
    self.state = "DISPENSING"
    return {"sell": slot, "change": change}

  def step(self, action):
    if self.done:
      return "Episode over.", 0.0, True, False, {"success": self.won}
    self.tries += 1
    box = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
    named = [w for w in re.findall(r"[a-z]+", (box[-1] if box else str(action)).lower()) if w in self.opts]
    book = named[-1] if named else None
    if book == self.answer:
      self.done = self.won = True
      return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
    msg = f"Not the {book} book." if book else "Name one book."
    self.done = self.tries >= self.MAX_TRIES
    tail = f" Out of tries; it was {self.answer}." if self.done else " Try again."
    msg + tail, 0.0, self.done, False, {"success": False}
  def get(self, slot):
    if self.state != "DISPENSING":
      raise InvalidEvent(self.state, "select")
    if self.stock.get(self.state, 0) == 0:
      return {"error": "sold_out", "slot": slot}
    price = self.prices[slot]
    if self.credit < price:
      return {"error": "insufficient_credit", "need": price - self.stock.get(self.state, 0)}
    self.stock[slot] -= 1
    change, self.credit = self.credit - price, 0
    self.state = "DISPENSING"
    return {"sell": slot, "change": change}

  def step(self, action):
    if self.done:
      return "Episode over.", 0.0, True, False, {"success": self.won}
    self.tries += 1
    box = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
    named = [w for w in re.findall(r"[a-z]+", (box[-1] if box else str(action)).lower()) if w in self.opts]
    book = named[-1] if named else None
    if book == self.answer:
      self.done = self.won = True
      return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
    msg = f"Not the {book} book." if book else "Name one book."
    self.done = self.tries >= self.MAX_TRIES
    tail = f" Out

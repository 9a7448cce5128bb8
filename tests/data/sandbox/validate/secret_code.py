class SecretCodeEnv:
    def reset(self, seed=None):
        self.turn = 0
        return "Enter the four-digit code as \\boxed{code}.", {}

    def step(self, action):
        self.turn += 1
        if "7391" in action:
            return "Unlocked.", 1.0, True, False, {"success": True}
        return "Locked.", 0.0, self.turn >= 4, False, {}

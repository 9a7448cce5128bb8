# expect: invalid_result
# phase: interface
def reset(seed=None):
    return "x", {}

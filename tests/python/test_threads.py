"""Several Python threads calling run on one session: every result right (runs release the GIL)."""

import concurrent.futures

import numpy as np

import kiln
from conftest import CPU


def test_concurrent_runs_match_single_runs(models):
    session = kiln.InferenceSession(models["tiny_cnn"], providers=CPU)
    rng = np.random.default_rng(3)
    images = [rng.standard_normal((1, 3, 32, 32)).astype(np.float32) for _ in range(8)]
    expected = [session.run(None, {"image": image})[0] for image in images]

    def run(index):
        return index, session.run(None, {"image": images[index]})[0]

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        for index, result in pool.map(run, [i % len(images) for i in range(64)]):
            np.testing.assert_array_equal(result, expected[index])


def test_sessions_in_threads(models):
    def create_and_run(_):
        session = kiln.InferenceSession(models["add_mul"], providers=CPU)
        a = np.ones((2, 5), np.float32)
        return session.run(["sum"], {"a": a, "b": a})[0]

    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        for result in pool.map(create_and_run, range(6)):
            assert (result == 2).all()

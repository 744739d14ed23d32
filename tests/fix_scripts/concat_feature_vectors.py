# expect: dim-out-of-range
import torch


def describe(signal):
    """Hand-made features of a 1-D signal: 4 statistics followed by the first 8 FFT magnitudes."""
    stats = torch.stack([signal.mean(), signal.std(), signal.min(), signal.max()])
    spectrum = torch.fft.rfft(signal).abs()[:8]
    return torch.cat([stats, spectrum], dim=1)


torch.manual_seed(0)
wave = torch.sin(torch.linspace(0, 20, 256)) + 0.1 * torch.randn(256)
feat = describe(wave)

assert feat.shape == (12,)
assert torch.isclose(feat[0], wave.mean())

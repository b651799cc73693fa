"""Operations: metrics, the ops report, the quality gate."""

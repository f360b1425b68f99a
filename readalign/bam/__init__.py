"""The BAM stage behind ``readalign align``: pair builder, selection, records, the stage runner."""

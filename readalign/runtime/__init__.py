"""Host plumbing shared by the products: backend choice, GPU memory, copies, stage threads."""

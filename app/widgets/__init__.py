"""Ridge's reusable widgets: the deployment card, the prediction form, the napkin, the charts."""

"""service/core"""

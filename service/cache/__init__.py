"""service/cache"""
